import Foundation

extension Transaction {
    /// A sequence of verified-or-not transactions: a finite view of the account, or the endless updates feed.
    ///
    /// Iterating never throws, as in StoreKit. When the store cannot be reached the sequence ends,
    /// and the reason is reported on standard error.
    public struct Transactions: AsyncSequence, Sendable {
        public typealias Element = VerificationResult<Transaction>

        enum Source: Sendable {
            case view(TransactionView, productID: String?)
            case updates
        }

        /// The client to read from; `nil` for the static sequences, which bind when iterated.
        let client: StoreClient?
        let source: Source

        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(client: client, source: source)
        }

        /// Reads the store lazily: a view on the first `next()`, updates batch by batch as they arrive.
        ///
        /// The static sequences find their client on the first `next()`: the task's, else the
        /// process's; `Transaction.updates` waits for one to be set, views read the active client.
        public struct AsyncIterator: AsyncIteratorProtocol, Sendable {
            public typealias Element = VerificationResult<Transaction>

            var bound: StoreClient?
            let source: Source
            var buffer: [Element] = []
            var position = 0
            var fetchedView = false
            /// For `updates`: this listener's copy of the client's shared feed.
            var feed: FeedListener?

            init(client: StoreClient?, source: Source) {
                self.bound = client
                self.source = source
            }

            public mutating func next() async -> Element? {
                if bound == nil {
                    if case .updates = source {
                        guard let client = await StoreClient.awaitingActive() else { return nil }
                        bound = client
                    } else {
                        bound = StoreClient.active
                    }
                }
                guard let client = bound else { return nil }
                while position == buffer.count {
                    guard !Task.isCancelled else { return nil }
                    buffer = []
                    position = 0
                    switch source {
                    case .view(let view, let productID):
                        if fetchedView { return nil }
                        fetchedView = true
                        do {
                            let items = try await client.transport.transactions(view, device: client.device)
                            buffer = items.compactMap { client.verifyTransaction($0) }
                                .filter { productID == nil || $0.unsafePayloadValue.productID == productID }
                        } catch {
                            StoreDiagnostics.report("reading transactions failed: \(error)")
                            return nil
                        }
                    case .updates:
                        if feed == nil { feed = client.transactionFeed.listen() }
                        guard let updates = await feed?.next() else { return nil }
                        buffer = updates.compactMap { client.verifyTransaction($0.transaction) }
                    }
                }
                defer { position += 1 }
                return buffer[position]
            }
        }
    }

    /// Transactions that happen outside a purchase call: other devices, Ask to Buy approvals,
    /// renewals, refunds and revocations, and, once after launch, unfinished transactions.
    /// Start listening when the app starts.
    /// A listener started before the app sets ``StoreClient/default`` waits for it.
    public static var updates: Transactions { Transactions(client: StoreClient.current, source: .updates) }

    /// The account's transaction history: everything but finished consumables (unless the store keeps them).
    public static var all: Transactions { Transactions(client: StoreClient.current, source: .view(.all, productID: nil)) }

    /// The latest transaction of every product the customer is entitled to now.
    public static var currentEntitlements: Transactions {
        Transactions(client: StoreClient.current, source: .view(.currentEntitlements, productID: nil))
    }

    /// Transactions the app has not finished.
    public static var unfinished: Transactions { Transactions(client: StoreClient.current, source: .view(.unfinished, productID: nil)) }

    /// The history of one product.
    public static func all(for productID: String) -> Transactions {
        Transactions(client: StoreClient.current, source: .view(.all, productID: productID))
    }

    /// The current entitlements to one product (a customer can hold several: their own and a family member's).
    public static func currentEntitlements(for productID: String) -> Transactions {
        Transactions(client: StoreClient.current, source: .view(.currentEntitlements, productID: productID))
    }

    /// The current entitlement to one product: the first of ``currentEntitlements(for:)``.
    ///
    /// Not marked deprecated: Apple deprecates it from iOS 18.4 deployment targets on, and Linux has
    /// no deployment target, so a warning here would fail builds that treat warnings as errors.
    public static func currentEntitlement(for productID: String) async -> VerificationResult<Transaction>? {
        for await result in currentEntitlements(for: productID) { return result }
        return nil
    }

    /// The most recent transaction of a product, if any.
    public static func latest(for productID: String) async -> VerificationResult<Transaction>? {
        await StoreClient.active.latestTransaction(for: productID)
    }
}

extension StoreClient {
    /// `Transaction.updates` for this device.
    public var transactionUpdates: Transaction.Transactions { .init(client: self, source: .updates) }
    /// `Transaction.all` for this device's account.
    public var allTransactions: Transaction.Transactions { .init(client: self, source: .view(.all, productID: nil)) }
    /// `Transaction.currentEntitlements` for this device's account.
    public var currentEntitlements: Transaction.Transactions { .init(client: self, source: .view(.currentEntitlements, productID: nil)) }
    /// `Transaction.unfinished` for this device's account.
    public var unfinishedTransactions: Transaction.Transactions { .init(client: self, source: .view(.unfinished, productID: nil)) }

    /// `Transaction.latest(for:)` for this device's account.
    public func latestTransaction(for productID: String) async -> VerificationResult<Transaction>? {
        do {
            let items = try await transport.transactions(.latest(productID: productID), device: device)
            return items.first.flatMap { verifyTransaction($0) }
        } catch {
            StoreDiagnostics.report("reading the latest transaction of \(productID) failed: \(error)")
            return nil
        }
    }
}
