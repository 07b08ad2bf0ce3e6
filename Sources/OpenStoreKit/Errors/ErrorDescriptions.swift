import Foundation

// StoreKit's errors say what went wrong in words (`localizedDescription`), as Apple's do, instead of
// Foundation's generic "The operation could not be completed".

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
}

extension StoreConnectionError: LocalizedError {
    public var errorDescription: String? { message }
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
}

extension VerificationResult.VerificationError: LocalizedError {
    public var errorDescription: String? {
        let text = description
        return text.prefix(1).uppercased() + text.dropFirst() + "."
    }
}
