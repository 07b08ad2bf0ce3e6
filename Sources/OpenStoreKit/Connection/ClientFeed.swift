import Foundation

/// One channel of a device's feed as an endless sequence of `Element`: `Status.updates`,
/// `Message.messages`, `PurchaseIntent.intents` and `Storefront.updates` are each one of these.
///
/// Iterating binds to the active client when first asked (waiting for one to be set, as every
/// StoreKit sequence does), listens to the client's shared broadcast of the channel, and turns each
/// batch into elements. The sequence ends when the task is cancelled or the store cannot be reached.
public struct ClientFeed<Element: Sendable>: AsyncSequence, Sendable {
    /// The client to read from; `nil` for a static sequence, which binds when iterated.
    let client: StoreClient?
    let channel: TransportUpdate.Channel
    let transform: @Sendable (StoreClient, [TransportUpdate]) async -> [Element]

    init(client: StoreClient?, channel: TransportUpdate.Channel,
         transform: @escaping @Sendable (StoreClient, [TransportUpdate]) async -> [Element]) {
        self.client = client
        self.channel = channel
        self.transform = transform
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(feed: self) }

    public struct AsyncIterator: AsyncIteratorProtocol, Sendable {
        private let feed: ClientFeed
        private var bound: StoreClient?
        private var buffer: [Element] = []
        private var position = 0
        /// This listener's copy of the client's shared broadcast.
        private var listener: FeedListener?

        init(feed: ClientFeed) {
            self.feed = feed
            self.bound = feed.client
        }

        public mutating func next() async -> Element? {
            if bound == nil {
                guard let client = await StoreClient.awaitingActive() else { return nil }
                bound = client
            }
            guard let client = bound else { return nil }
            while position == buffer.count {
                guard !Task.isCancelled else { return nil }
                position = 0
                if listener == nil { listener = client.feed(feed.channel).listen() }
                guard let updates = await listener?.next() else { return nil }
                buffer = await feed.transform(client, updates)
            }
            defer { position += 1 }
            return buffer[position]
        }
    }
}
