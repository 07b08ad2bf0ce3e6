import Foundation

/// A message the App Store has for the customer, as StoreKit's `Message`: a billing problem, a price
/// increase waiting for consent, a win-back offer.
///
/// Messages arrive through ``messages`` when the store sends them (a renewal fails, the developer
/// asks for price-increase consent, a subscription with an eligible win-back offer expires). An app
/// that listens may defer a message and ``display()`` it when convenient; what the customer does in
/// its sheet is what the test controls queued for that sheet.
public struct Message: Hashable, Sendable {
    /// Why the App Store shows a message.
    ///
    /// Its raw value is an `Int`, as StoreKit's; the store's feed names reasons in words
    /// (``name``), which ``init(name:)`` reads.
    public struct Reason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public static let generic = Reason(rawValue: 0)
        /// A subscription's price goes up and the customer has not consented yet.
        public static let priceIncreaseConsent = Reason(rawValue: 1)
        /// A renewal could not be billed; the customer should update the payment method.
        public static let billingIssue = Reason(rawValue: 2)
        /// An expired subscriber may come back with a win-back offer.
        public static let winBackOffer = Reason(rawValue: 3)

        private static let names: [(Reason, String)] = [
            (.generic, "generic"), (.priceIncreaseConsent, "priceIncreaseConsent"), (.billingIssue, "billingIssue"), (.winBackOffer, "winBackOffer"),
        ]

        /// The reason's name as the store's feed carries it (`billingIssue`); `generic` for reasons this
        /// version does not know.
        public var name: String { Self.names.first { $0.0 == self }?.1 ?? "generic" }

        /// The reason the store's feed names `name`; ``generic`` for names this version does not know.
        public init(name: String) { self = Self.names.first { $0.1 == name }?.0 ?? .generic }

        public var description: String { name }
    }

    public let reason: Reason
    /// The original transaction of the subscription the message is about.
    let subjectTransactionID: UInt64?
    let client: StoreClient

    /// Shows the message's sheet and returns when the customer closes it: accepting or declining a
    /// price increase, updating a payment method, or taking a win-back offer as queued with
    /// `TestSession.queueCustomerResponse(_:in:device:)`, or simply closing it.
    public func display() async throws {
        try await client.presentSheet(reason.name, about: subjectTransactionID)
    }

    public static func == (lhs: Message, rhs: Message) -> Bool {
        lhs.reason == rhs.reason && lhs.subjectTransactionID == rhs.subjectTransactionID && lhs.client === rhs.client
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(reason)
        hasher.combine(subjectTransactionID)
    }

    /// The messages the App Store sends this app, as they arrive. A listener started before the app
    /// sets ``StoreClient/default`` waits for it.
    public static var messages: Messages { feed(client: StoreClient.current) }

    /// The endless sequence of messages for a device.
    public typealias Messages = ClientFeed<Message>

    static func feed(client: StoreClient?) -> Messages {
        ClientFeed(client: client, channel: .messages) { client, updates in
            updates.compactMap { update in
                update.messageReason.map { Message(reason: Reason(name: $0), subjectTransactionID: update.subjectTransactionID, client: client) }
            }
        }
    }
}

extension StoreClient {
    /// `Message.messages` for this device.
    public var messages: Message.Messages { Message.feed(client: self) }
}
