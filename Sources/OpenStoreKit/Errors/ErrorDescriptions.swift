import Foundation

// StoreKit's errors say in words what went wrong (`errorDescription`), why (`failureReason`) and what
// to do about it (`recoverySuggestion`), as Apple's do, instead of Foundation's generic "The operation
// could not be completed". Apple does not publish its wording; these are this package's, in English.

extension StoreKitError: LocalizedError {
    public var errorDescription: String? {
        switch self {
        case .unknown: return "An unknown error occurred."
        case .userCancelled: return "The user cancelled."
        case .networkError(let error): return "The App Store could not be reached (\(error.code.rawValue))."
        case .systemError(let error): return "A system error occurred: \(error.localizedDescription)"
        case .notAvailableInStorefront: return "The product is not available in the current storefront."
        case .notEntitled: return "The app is not entitled to this request."
        case .unsupported: return "This request is not supported."
        }
    }

    public var failureReason: String? {
        switch self {
        case .unknown: return "The App Store failed in a way StoreKit does not describe."
        case .userCancelled: return "The customer closed the sheet or declined the purchase."
        case .networkError: return "The network connection to the App Store failed."
        case .systemError: return "The App Store or its connection reported a failure."
        case .notAvailableInStorefront: return "The customer's storefront does not sell this product."
        case .notEntitled: return "The app lacks an entitlement this request needs."
        case .unsupported: return "This device or environment does not support the request."
        }
    }

    public var recoverySuggestion: String? {
        switch self {
        case .unknown, .systemError: return "Try again later."
        case .userCancelled: return nil
        case .networkError: return "Check the network connection and try again."
        case .notAvailableInStorefront: return "Offer the product only where Storefront.current sells it."
        case .notEntitled: return "Add the entitlement to the app, or do not make this request."
        case .unsupported: return "Use another API for this environment."
        }
    }
}

extension StoreConnectionError: LocalizedError {
    public var errorDescription: String? { message }
    public var failureReason: String? { message }
    public var recoverySuggestion: String? { "Check that the local App Store is running and reachable, then try again." }
}

extension Product.PurchaseError: LocalizedError {
    public var errorDescription: String? {
        switch self {
        case .invalidQuantity: return "The quantity is not valid for this product."
        case .productUnavailable: return "The product is not available."
        case .purchaseNotAllowed: return "Purchases are not allowed for this account."
        case .ineligibleForOffer: return "The customer is not eligible for the offer."
        case .invalidOfferIdentifier: return "The offer identifier is not valid."
        case .invalidOfferPrice: return "The offer price is not valid."
        case .invalidOfferSignature: return "The offer signature is not valid."
        case .missingOfferParameters: return "Parameters of the offer are missing."
        case .paymentMethodBindingConfigurationRequired: return "The payment method needs to be set up for this app."
        }
    }

    public var failureReason: String? {
        switch self {
        case .invalidQuantity: return "A consumable can be bought 1 to 10 at a time, any other product once."
        case .productUnavailable: return "The product is not for sale now."
        case .purchaseNotAllowed: return "The account's in-app purchases are restricted."
        case .ineligibleForOffer: return "The offer is for other customers (new, current or lapsed subscribers)."
        case .invalidOfferIdentifier: return "The product has no offer with this identifier."
        case .invalidOfferPrice: return "The offer's price is higher than the product's price."
        case .invalidOfferSignature: return "The signature does not verify with the app's in-app purchase key, or was signed for another offer."
        case .missingOfferParameters: return "The offer needs a signature, and some of its fields are missing."
        case .paymentMethodBindingConfigurationRequired: return "The account has no payment method bound to this app."
        }
    }

    public var recoverySuggestion: String? {
        switch self {
        case .invalidQuantity: return "Ask for a quantity the product allows."
        case .productUnavailable: return "Fetch the product again; offer only products the store returns."
        case .purchaseNotAllowed: return "Check AppStore.canMakePayments before offering purchases."
        case .ineligibleForOffer: return "Check eligibility before offering the offer."
        case .invalidOfferIdentifier: return "Use an offer identifier from the product's subscription info."
        case .invalidOfferPrice: return "Correct the offer's price in App Store Connect or the .storekit file."
        case .invalidOfferSignature: return "Sign the offer again on the server with the app's in-app purchase key."
        case .missingOfferParameters: return "Pass every field of the signed offer."
        case .paymentMethodBindingConfigurationRequired: return "Ask the customer to bind a payment method, then try again."
        }
    }
}

extension Transaction.RefundRequestError: LocalizedError {
    public var errorDescription: String? {
        switch self {
        case .duplicateRequest: return "A refund was already requested for this transaction."
        case .failed: return "The refund request failed."
        }
    }

    public var failureReason: String? {
        switch self {
        case .duplicateRequest: return "The App Store has a refund request for this transaction already."
        case .failed: return "The App Store could not take the refund request."
        }
    }

    public var recoverySuggestion: String? {
        switch self {
        case .duplicateRequest: return "Wait for the App Store's decision on the request made before."
        case .failed: return "Try again later, or ask the customer to request a refund at reportaproblem.apple.com."
        }
    }
}

extension VerificationResult.VerificationError: LocalizedError {
    public var errorDescription: String? {
        let text = description
        return text.prefix(1).uppercased() + text.dropFirst() + "."
    }

    public var failureReason: String? {
        switch self {
        case .revokedCertificate: return "The App Store revoked a certificate that signed the value."
        case .invalidCertificateChain: return "The value's certificates do not lead to the App Store's root."
        case .invalidDeviceVerification: return "The value's device verification does not match this device."
        case .invalidEncoding: return "The value is not a well-formed JWS."
        case .invalidSignature: return "The signature does not hold, or the value is for another app or environment."
        case .missingRequiredProperties: return "The payload lacks properties every value of its kind has."
        }
    }

    public var recoverySuggestion: String? {
        "Do not grant anything from this value; fetch it again from the App Store."
    }
}
