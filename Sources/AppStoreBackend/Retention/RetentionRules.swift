import AppStoreModels
import AppStoreSigning
import Foundation

/// A rule the developer's backend answers the App Store's Get Retention Message requests with: which
/// subscriptions it applies to (a product, how long the customer has subscribed, whether they are in
/// a free trial) and what to show. Rules are tried in order; the first that applies answers.
public struct RetentionRule: Codable, Hashable, Sendable {
    /// What a rule shows.
    public enum Kind: String, Codable, Hashable, Sendable, CaseIterable {
        /// A message (text, or text with an image).
        case message
        /// A switch-plan suggestion: a message and another plan of the group.
        case switchPlan
        /// A promotional offer of the subscription's product, with a message, signed with the
        /// developer's subscription offer key (`backend serve --offer-key`).
        case promotionalOffer
    }

    public var id: String
    public var position: Int
    /// The product the subscription is on; any product when `nil`.
    public var productID: String?
    /// Whole days since the customer first subscribed, inclusive bounds; no bound when `nil`.
    public var minimumDays: Int?
    public var maximumDays: Int?
    /// Only customers in a free trial (`true`), only those who are not (`false`), or anyone (`nil`).
    public var inTrial: Bool?
    public var kind: Kind
    public var messageIdentifier: String
    /// The plan a switch-plan rule suggests.
    public var alternateProductID: String?
    /// The promotional offer a promotional-offer rule makes (an offer of the subscription's product).
    public var offerIdentifier: String?
    /// What the developer calls the message (its header, say), for the dashboard and the figures:
    /// the App Store's API gives the backend only its UUID.
    public var messageName: String?

    public init(id: String, position: Int, productID: String? = nil, minimumDays: Int? = nil, maximumDays: Int? = nil, inTrial: Bool? = nil,
                kind: Kind, messageIdentifier: String, alternateProductID: String? = nil, offerIdentifier: String? = nil, messageName: String? = nil) {
        self.id = id
        self.position = position
        self.productID = productID
        self.minimumDays = minimumDays
        self.maximumDays = maximumDays
        self.inTrial = inTrial
        self.kind = kind
        self.messageIdentifier = messageIdentifier
        self.alternateProductID = alternateProductID
        self.offerIdentifier = offerIdentifier
        self.messageName = messageName
    }

    /// The rule in words, for a message the developer gave no name: what it shows, to whom.
    public var summary: String {
        var words: String = switch kind {
        case .message: "A message"
        case .switchPlan: "A switch to \(alternateProductID ?? "another plan")"
        case .promotionalOffer: "Offer \(offerIdentifier ?? "?")"
        }
        words += " for subscribers of \(productID ?? "any product")"
        if let minimumDays { words += ", from day \(minimumDays)" }
        if let maximumDays { words += ", up to day \(maximumDays)" }
        if let inTrial { words += inTrial ? ", in a free trial" : ", not in a free trial" }
        return words
    }

    /// What the backend knows of the subscription a request is about.
    public struct Subscriber: Sendable {
        public var productID: String
        public var daysSubscribed: Int
        public var inTrial: Bool
    }

    /// Whether the rule applies to `subscriber`.
    public func applies(to subscriber: Subscriber) -> Bool {
        if let productID, productID != subscriber.productID { return false }
        if let minimumDays, subscriber.daysSubscribed < minimumDays { return false }
        if let maximumDays, subscriber.daysSubscribed > maximumDays { return false }
        if let inTrial, inTrial != subscriber.inTrial { return false }
        return true
    }

    /// The App Store's answer body for this rule to a request about `productID`: a promotional offer
    /// is signed with `offerSigner` (a V2 signature, as Apple's `PromotionalOfferV2SignatureCreator`
    /// makes) at `issuedAt`, the request's own time, so it is valid in the App Store's world.
    ///
    /// - Throws: ``BackendError/unavailable(_:)`` for an offer rule when the backend has no offer key.
    public func response(productID: String, transactionID: String? = nil, offerSigner: OfferSignatureCreator?, nonce: UUID,
                         issuedAt: Date) throws(BackendError) -> RealtimeResponseBody {
        switch kind {
        case .message: return RealtimeResponseBody(message: RealtimeMessage(messageIdentifier: messageIdentifier))
        case .switchPlan: return RealtimeResponseBody(alternateProduct: AlternateProduct(messageIdentifier: messageIdentifier, productId: alternateProductID))
        case .promotionalOffer:
            guard let offerSigner else { throw .unavailable("rule \(id) makes a promotional offer, and the backend has no offer key to sign it with (backend serve --offer-key)") }
            let signature: String
            do {
                signature = try offerSigner.promotionalOfferSignature(productId: productID, offerIdentifier: offerIdentifier ?? "", transactionId: transactionID,
                                                                     nonce: nonce, issuedAt: issuedAt)
            } catch {
                throw .unavailable("the offer of rule \(id) could not be signed: \(error)")
            }
            return RealtimeResponseBody(promotionalOffer: RealtimePromotionalOffer(messageIdentifier: messageIdentifier, promotionalOfferSignatureV2: signature))
        }
    }

    /// Refuses a rule that cannot answer: a switch-plan rule needs a plan, a message identifier is a UUID.
    public func validate() throws(BackendError) {
        guard UUID(uuidString: messageIdentifier) != nil else { throw .badRequest("a rule's message is a UUID, not '\(messageIdentifier.prefix(64))'") }
        if kind == .switchPlan, alternateProductID?.isEmpty ?? true { throw .badRequest("a switch-plan rule names the plan to suggest") }
        if kind == .promotionalOffer, offerIdentifier?.isEmpty ?? true { throw .badRequest("a promotional-offer rule names the offer to make") }
        if let minimumDays, let maximumDays, minimumDays > maximumDays { throw .badRequest("a rule's minimum days (\(minimumDays)) exceed its maximum (\(maximumDays))") }
        if let messageName, messageName.count > 200 || messageName.contains(where: \.isNewline) {
            throw .badRequest("a message's name is one line of at most 200 characters")
        }
    }
}

/// A Get Retention Message request the backend answered, and the rule that answered it.
public struct RetentionRequestRecord: Codable, Hashable, Sendable {
    public var requestIdentifier: String
    public var originalTransactionID: String
    public var productID: String
    /// The App Store's time of the request (`signedDate`), in milliseconds.
    public var requestedDate: Int64
    public var ruleID: String?
    public var messageIdentifier: String?
}

/// How often each message was shown through the backend's answers, and what customers did after.
///
/// An outcome is the first of these notifications about the subscription after the request:
/// `DID_CHANGE_RENEWAL_STATUS`/`AUTO_RENEW_DISABLED` (cancelled), `OFFER_REDEEMED` (redeemed),
/// `DID_CHANGE_RENEWAL_PREF` or an upgrade (switched); none is kept.
public struct RetentionFigure: Codable, Hashable, Sendable {
    public var messageIdentifier: String
    /// The name a rule gives the message (`retention-rule add --name`), else what its rule shows, in words.
    public var messageName: String?
    public var shown: Int
    public var kept: Int
    public var switched: Int
    public var redeemed: Int
    public var cancelled: Int
}
