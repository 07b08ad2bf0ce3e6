// Corpus: buying a subscription with a promotional offer the app's server signed, in each of the three
// forms StoreKit takes (the original fields, a `Product.SubscriptionOffer.Signature`, a compact JWS),
// and with the server's decision on the introductory offer. Shaped like the offer helpers of paywall
// libraries: the server's answer arrives as plain values and the options are built here. Imports only
// StoreKit.
import StoreKit

/// What the app's server answers when asked to sign an offer for a customer.
struct ServerSignedOffer: Sendable {
    var offerID: String
    var keyID: String
    var nonce: UUID
    /// Milliseconds since 1970, as signed.
    var timestamp: Int
    /// The DER signature over the joined fields.
    var signature: Data
    /// The same offer signed as a compact JWS.
    var compactJWS: String
}

enum OfferPurchases {
    /// How the app hands the signed offer to StoreKit.
    enum Form: String, CaseIterable, Sendable {
        case signedFields, signatureValue, compactJWS
    }

    static func options(for offer: ServerSignedOffer, form: Form, appAccountToken: UUID?) -> Set<Product.PurchaseOption> {
        var options: Set<Product.PurchaseOption> = []
        if let appAccountToken {
            options.insert(.appAccountToken(appAccountToken))
        }
        switch form {
        case .signedFields:
            options.insert(.promotionalOffer(offerID: offer.offerID, keyID: offer.keyID, nonce: offer.nonce,
                                             signature: offer.signature, timestamp: offer.timestamp))
        case .signatureValue:
            let signature = Product.SubscriptionOffer.Signature(keyID: offer.keyID, nonce: offer.nonce, timestamp: offer.timestamp,
                                                                signature: offer.signature)
            options.insert(.promotionalOffer(offerID: offer.offerID, signature: signature))
        case .compactJWS:
            options.formUnion(Product.PurchaseOption.promotionalOffer(offer.offerID, compactJWS: offer.compactJWS))
        }
        return options
    }

    /// Buys `product` with the signed offer; the verified transaction, finished, or `nil`.
    static func buy(_ product: Product, with offer: ServerSignedOffer, form: Form, appAccountToken: UUID? = nil) async throws -> Transaction? {
        try await finished(product.purchase(options: options(for: offer, form: form, appAccountToken: appAccountToken)))
    }

    /// Buys `product` with the server's decision on the introductory offer (a compact JWS), and a
    /// custom option the app's analytics reads back.
    static func buy(_ product: Product, introductoryOfferEligibility compactJWS: String) async throws -> Transaction? {
        try await finished(product.purchase(options: [.introductoryOfferEligibility(compactJWS: compactJWS),
                                                      .custom(key: "paywall", value: "onboarding")]))
    }

    private static func finished(_ result: Product.PurchaseResult) async -> Transaction? {
        guard case .success(let verification) = result, case .verified(let transaction) = verification else { return nil }
        await transaction.finish()
        return transaction
    }

    /// What the paywall says of the offer the customer bought with.
    static func describe(_ transaction: Transaction) -> String {
        guard let offer = transaction.offer else { return "no offer" }
        return "\(offer.type == .promotional ? "promotional" : offer.type == .introductory ? "introductory" : "other") \(offer.id ?? "")"
            .trimmingCharacters(in: .whitespaces)
    }
}
