import AppStoreModels
import AppStoreSigning
import Foundation
import StoreKitCatalog

/// A customer's visit to a subscription's cancellation page: what was shown, where it came from, and
/// what the customer did.
public struct RetentionOfferAttempt: Codable, Hashable, Sendable, Identifiable {
    /// Where the shown message came from.
    public enum Source: String, Codable, Hashable, Sendable {
        /// The developer's Get Retention Message endpoint answered in time with something showable.
        case realtime
        /// The default message for the product and locale (no real-time URL, or its answer failed).
        case defaultMessage
        /// Nothing to show: no usable answer and no default.
        case none
    }

    /// What the customer was offered besides keeping or cancelling.
    public enum Kind: String, Codable, Hashable, Sendable {
        case message
        case switchPlan
        case promotionalOffer
    }

    /// What the customer did.
    public enum Outcome: String, Codable, Hashable, Sendable, CaseIterable {
        /// Kept the subscription as it was.
        case kept
        /// Switched to the suggested plan.
        case switched
        /// Redeemed the promotional offer.
        case redeemed
        /// Confirmed the cancellation: automatic renewal off.
        case cancelled
    }

    public var id: String
    public var originalTransactionID: UInt64
    public var account: String
    public var productID: String
    public var locale: String
    /// When the page opened, in milliseconds since 1970 (as Apple's dates are).
    public var date: Int64
    public var source: Source
    /// Why the real-time answer was not used (`TIMED_OUT`, `UNSUCCESSFUL_HTTP_RESPONSE_CODE`, or
    /// what made the answer unusable), when a real-time URL was called.
    public var realtimeFailure: String?
    public var kind: Kind?
    public var messageIdentifier: String?
    /// The plan a switch-plan message suggests.
    public var alternateProductID: String?
    /// The promotional offer of a promotional-offer message, and its signature.
    public var offerIdentifier: String?
    public var offerSignature: PromotionalOfferSignatureInput?
    public var outcome: Outcome?
    /// When the customer answered, in milliseconds since 1970.
    public var answeredDate: Int64?

    public init(id: String, originalTransactionID: UInt64, account: String, productID: String, locale: String, date: Int64, source: Source,
                realtimeFailure: String? = nil, kind: Kind? = nil, messageIdentifier: String? = nil, alternateProductID: String? = nil,
                offerIdentifier: String? = nil, offerSignature: PromotionalOfferSignatureInput? = nil) {
        self.id = id
        self.originalTransactionID = originalTransactionID
        self.account = account
        self.productID = productID
        self.locale = locale
        self.date = date
        self.source = source
        self.realtimeFailure = realtimeFailure
        self.kind = kind
        self.messageIdentifier = messageIdentifier
        self.alternateProductID = alternateProductID
        self.offerIdentifier = offerIdentifier
        self.offerSignature = offerSignature
    }

    /// The answers the customer can give to what was shown.
    public var answers: [Outcome] {
        switch kind {
        case .switchPlan?: return [.kept, .switched, .cancelled]
        case .promotionalOffer?: return [.kept, .redeemed, .cancelled]
        default: return [.kept, .cancelled]
        }
    }
}

extension PromotionalOfferSignatureInput: Codable {
    private enum CodingKeys: String, CodingKey { case keyID, nonce, timestamp, signature, jws }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let jws = try container.decodeIfPresent(String.self, forKey: .jws) {
            self = .jws(jws)
        } else {
            self = .legacy(keyID: try container.decode(String.self, forKey: .keyID), nonce: try container.decode(UUID.self, forKey: .nonce),
                           timestamp: try container.decode(Int64.self, forKey: .timestamp), signature: try container.decode(String.self, forKey: .signature))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .jws(let jws): try container.encode(jws, forKey: .jws)
        case .legacy(let keyID, let nonce, let timestamp, let signature):
            try container.encode(keyID, forKey: .keyID)
            try container.encode(nonce, forKey: .nonce)
            try container.encode(timestamp, forKey: .timestamp)
            try container.encode(signature, forKey: .signature)
        }
    }
}

/// Where a cancellation's message may come from, as the server needs it before calling out.
public struct RetentionCancellationContext: Sendable {
    public var originalTransactionID: UInt64
    public var productID: String
    public var locale: String
    /// The developer's Get Retention Message endpoint, if configured.
    public var realtimeURL: String?
    /// The default message for the product and locale, if configured.
    public var defaultMessageIdentifier: String?
}

extension SimulatedAppStore {
    enum RetentionAttemptMeta {
        static let attempts = "retentionAttempts"
    }

    /// What a cancellation of the subscription `originalTransactionID` (any of its transactions) can
    /// show: refused when there is no subscription, or it no longer renews.
    public func retentionCancellationContext(originalTransactionID id: UInt64, locale: String) throws -> RetentionCancellationContext {
        try Self.checkRetentionLocale(locale)
        return try reading { () throws(AppStoreError) in
            guard let record = controlledSubscription(id) else { throw .control(.noSubscriptionFound, "transaction \(id) has no subscription") }
            guard record.autoRenewEnabled, record.state != .expired, record.state != .revoked else {
                throw .control(.invalidAction, "subscription \(record.originalTransactionID) does not renew: there is nothing to cancel")
            }
            let setup = try retentionSetupForReading()
            return RetentionCancellationContext(originalTransactionID: record.originalTransactionID, productID: record.productID, locale: locale,
                                                realtimeURL: setup.realtimeURL, defaultMessageIdentifier: setup.defaults[record.productID]?[locale])
        }
    }

    /// Records a visit to the cancellation page: what the developer's real-time answer chose (when
    /// `answer` is given and showable), else the default message, else nothing. An answer that names
    /// a message not approved, shows an image with a switch-plan or offer message, or suggests a plan
    /// outside the subscription's group is not showable, as on Apple's servers, and the default is
    /// shown instead (`realtimeFailure` says why).
    public func recordCancellationAttempt(_ context: RetentionCancellationContext, answer: RealtimeResponseBody?,
                                          realtimeFailure: String?) throws -> RetentionOfferAttempt {
        let id = identifiers().uuidString.lowercased()
        let now = clock.now()
        return try changingRetentionSetup { setup, change in
            guard let record = controlledSubscription(context.originalTransactionID) else {
                throw AppStoreError.control(.noSubscriptionFound, "transaction \(context.originalTransactionID) has no subscription")
            }
            var attempt = RetentionOfferAttempt(id: id, originalTransactionID: record.originalTransactionID, account: record.account,
                                                productID: record.productID, locale: context.locale,
                                                date: AppStoreJSON.milliseconds(from: now), source: .none,
                                                realtimeFailure: realtimeFailure)
            if let answer {
                do {
                    try showRealtimeAnswer(answer, of: record, setup: setup, in: &attempt)
                    attempt.source = .realtime
                } catch let refusal as RetentionAnswerRefusal {
                    attempt.realtimeFailure = refusal.reason
                }
            }
            if attempt.source == .none, let identifier = setup.defaults[record.productID]?[context.locale],
               let message = setup.messages.first(where: { $0.identifier == identifier }), Self.showable(message, setup: setup) {
                attempt.source = .defaultMessage
                attempt.kind = .message
                attempt.messageIdentifier = identifier
            }
            var attempts = try storedRetentionAttempts()
            attempts.append(attempt)
            change.ledger.meta[RetentionAttemptMeta.attempts] = try Self.encode(attempts)
            return attempt
        }
    }

    private struct RetentionAnswerRefusal: Error {
        var reason: String
    }

    /// Fills `attempt` from a real-time answer, or throws why it cannot be shown.
    private func showRealtimeAnswer(_ answer: RealtimeResponseBody, of record: SubscriptionRecord, setup: RetentionMessagingSetup,
                                    in attempt: inout RetentionOfferAttempt) throws {
        let chosen = [answer.message != nil, answer.alternateProduct != nil, answer.promotionalOffer != nil].filter { $0 }.count
        guard chosen == 1 else { throw RetentionAnswerRefusal(reason: "INVALID_RESPONSE: one of message, alternateProduct and promotionalOffer is needed, \(chosen) given") }
        func approvedMessage(_ identifier: String?, withoutImage: Bool) throws -> String {
            guard let identifier = identifier?.lowercased(), let message = setup.messages.first(where: { $0.identifier == identifier }) else {
                throw RetentionAnswerRefusal(reason: "INVALID_RESPONSE: message \(identifier ?? "(none)") was not uploaded")
            }
            guard Self.showable(message, setup: setup) else { throw RetentionAnswerRefusal(reason: "INVALID_RESPONSE: message \(identifier) or its image is not approved") }
            if withoutImage, !message.content.imageIdentifiers.isEmpty {
                throw RetentionAnswerRefusal(reason: "INVALID_RESPONSE: a switch-plan or offer message cannot show images")
            }
            return identifier
        }
        if let message = answer.message {
            attempt.kind = .message
            attempt.messageIdentifier = try approvedMessage(message.messageIdentifier, withoutImage: false)
        } else if let alternate = answer.alternateProduct {
            attempt.messageIdentifier = try approvedMessage(alternate.messageIdentifier, withoutImage: true)
            guard let productID = alternate.productId, productID != record.productID,
                  let product = catalog().product(id: productID), product.subscription?.groupID == record.groupID else {
                throw RetentionAnswerRefusal(reason: "INVALID_RESPONSE: \(alternate.productId ?? "(none)") is not another plan of the subscription's group")
            }
            attempt.kind = .switchPlan
            attempt.alternateProductID = productID
        } else if let offer = answer.promotionalOffer {
            attempt.messageIdentifier = try approvedMessage(offer.messageIdentifier, withoutImage: true)
            let signature: PromotionalOfferSignatureInput
            let offerID: String
            if let jws = offer.promotionalOfferSignatureV2, offer.promotionalOfferSignatureV1 == nil {
                // Read to know the offer; the purchase verifies the signature when the customer redeems it.
                guard let claims = try? CompactJWS(jws).payload(as: OfferSignatureClaims.self), let id = claims.offerIdentifier,
                      claims.productId == record.productID else {
                    throw RetentionAnswerRefusal(reason: "INVALID_RESPONSE: promotionalOfferSignatureV2 is not an offer of \(record.productID)")
                }
                (signature, offerID) = (.jws(jws), id)
            } else if let v1 = offer.promotionalOfferSignatureV1, offer.promotionalOfferSignatureV2 == nil {
                guard v1.productId == record.productID, let nonce = UUID(uuidString: v1.nonce) else {
                    throw RetentionAnswerRefusal(reason: "INVALID_RESPONSE: promotionalOfferSignatureV1 is not an offer of \(record.productID)")
                }
                (signature, offerID) = (.legacy(keyID: v1.keyId, nonce: nonce, timestamp: v1.timestamp, signature: v1.encodedSignature), v1.offerIdentifier)
            } else {
                throw RetentionAnswerRefusal(reason: "INVALID_RESPONSE: a promotional offer needs one signature, V1 or V2")
            }
            guard catalog().product(id: record.productID)?.subscription?.promotionalOffers.contains(where: { $0.id == offerID }) == true else {
                throw RetentionAnswerRefusal(reason: "INVALID_RESPONSE: \(record.productID) has no promotional offer \(offerID)")
            }
            attempt.kind = .promotionalOffer
            attempt.offerIdentifier = offerID
            attempt.offerSignature = signature
        }
    }

    /// Whether a message and every image it shows are approved.
    private static func showable(_ message: RetentionMessagingSetup.Message, setup: RetentionMessagingSetup) -> Bool {
        message.state == .approved && message.content.imageIdentifiers.allSatisfy { image in
            setup.images.first { $0.identifier == image }?.state == .approved
        }
    }

    private func storedRetentionAttempts() throws -> [RetentionOfferAttempt] {
        guard let text = ledger.meta(RetentionAttemptMeta.attempts), !text.isEmpty else { return [] }
        return try Self.decode([RetentionOfferAttempt].self, text)
    }

    /// The visits to cancellation pages, oldest first, of one subscription or of all.
    public func cancellationAttempts(originalTransactionID: UInt64? = nil) throws -> [RetentionOfferAttempt] {
        let attempts = try reading { () throws(AppStoreError) in
            do { return try storedRetentionAttempts() } catch let error as AppStoreError { throw error } catch { throw .storage(.failed("\(error)", underlying: error)) }
        }
        return originalTransactionID.map { id in attempts.filter { $0.originalTransactionID == id } } ?? attempts
    }

    /// The customer's answer to a cancellation page, carried out in the same unit: keeping changes
    /// nothing; switching buys the suggested plan (the usual plan-change rules and notifications);
    /// redeeming buys the current plan with the promotional offer (`OFFER_REDEEMED`, the offer at the
    /// next renewal); cancelling turns automatic renewal off (`DID_CHANGE_RENEWAL_STATUS`).
    public func answerCancellationAttempt(_ id: String, outcome: RetentionOfferAttempt.Outcome) throws -> RetentionOfferAttempt {
        let now = clock.now()
        return try changingRetentionSetup { _, change in
            var attempts = try storedRetentionAttempts()
            guard let index = attempts.firstIndex(where: { $0.id == id.lowercased() }) else {
                throw AppStoreError.control(.invalidAction, "no cancellation attempt \(id)")
            }
            var attempt = attempts[index]
            guard attempt.outcome == nil else { throw AppStoreError.control(.invalidAction, "attempt \(attempt.id) was answered: \(attempt.outcome!.rawValue)") }
            guard attempt.answers.contains(outcome) else {
                throw AppStoreError.control(.invalidAction, "attempt \(attempt.id) offers \(attempt.answers.map(\.rawValue).joined(separator: ", ")), not \(outcome.rawValue)")
            }
            switch outcome {
            case .kept:
                break
            case .cancelled:
                try setAutoRenew(originalTransactionID: attempt.originalTransactionID, enabled: false, change: &change)
            case .switched, .redeemed:
                let productID = outcome == .switched ? attempt.alternateProductID! : attempt.productID
                let offer = outcome == .redeemed ? PurchaseOffer.promotional(id: attempt.offerIdentifier!, signature: attempt.offerSignature) : nil
                let request = PurchaseRequest(productID: productID, account: attempt.account, device: nil, offer: offer)
                let purchase = try buy(request, inApp: false, change: &change)
                guard case .completed = purchase else { throw AppStoreError.control(.invalidAction, "the \(outcome.rawValue) purchase did not complete") }
            }
            attempt.outcome = outcome
            attempt.answeredDate = AppStoreJSON.milliseconds(from: now)
            attempts[index] = attempt
            change.ledger.meta[RetentionAttemptMeta.attempts] = try Self.encode(attempts)
            return attempt
        }
    }
}
