import AppStoreModels

/// Why a request to the local App Store failed, with StoreKit's own error cases where StoreKit has one.
///
/// Purchase and product errors carry the names of `StoreKitError`, `Product.PurchaseError` and
/// `Transaction.RefundRequestError`; control errors those of `SKTestError`. `storage` means nothing
/// was committed.
public enum AppStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A `StoreKitError` case.
    case storeKit(StoreKitErrorCode, String)
    /// A `Product.PurchaseError` case.
    case purchase(PurchaseErrorCode, String)
    /// A `VerificationResult.VerificationError` case (simulated).
    case verification(VerificationErrorCode, String)
    /// A `Transaction.RefundRequestError` case.
    case refundRequest(RefundRequestErrorCode, String)
    /// An `SKTestError` case from a test-session control.
    case control(ControlErrorCode, String)
    /// The store's data could not be read or written; nothing was changed. The failure's reason says
    /// whether trying again may work (see ``StorageFailure/Reason``).
    case storage(StorageFailure)

    public var description: String {
        switch self {
        case .storeKit(let code, let message): return "StoreKitError.\(code.rawValue): \(message)"
        case .purchase(let code, let message): return "Product.PurchaseError.\(code.rawValue): \(message)"
        case .verification(let code, let message): return "VerificationError.\(code.rawValue): \(message)"
        case .refundRequest(let code, let message): return "RefundRequestError.\(code.rawValue): \(message)"
        case .control(let code, let message): return "SKTestError.\(code.rawValue): \(message)"
        case .storage(let failure): return "storage: \(failure.message)"
        }
    }

    /// The message without the code.
    public var message: String {
        switch self {
        case .storeKit(_, let message), .purchase(_, let message), .verification(_, let message),
             .refundRequest(_, let message), .control(_, let message):
            return message
        case .storage(let failure):
            return failure.message
        }
    }
}

/// The cases of StoreKit's `StoreKitError`, in StoreKit's declaration order.
public enum StoreKitErrorCode: String, Hashable, Sendable, Codable, CaseIterable {
    case unknown, userCancelled, networkError, systemError, notAvailableInStorefront, notEntitled, unsupported
}

/// The cases of StoreKit's `Product.PurchaseError`, in StoreKit's declaration order.
public enum PurchaseErrorCode: String, Hashable, Sendable, Codable, CaseIterable {
    case invalidQuantity, productUnavailable, purchaseNotAllowed, ineligibleForOffer, invalidOfferIdentifier
    case invalidOfferPrice, invalidOfferSignature, missingOfferParameters
}

/// The cases of StoreKit's `VerificationResult.VerificationError`, in StoreKit's declaration order.
public enum VerificationErrorCode: String, Hashable, Sendable, Codable, CaseIterable {
    case revokedCertificate, invalidCertificateChain, invalidDeviceVerification, invalidEncoding
    case invalidSignature, missingRequiredProperties
}

/// The cases of StoreKit's `Transaction.RefundRequestError`.
public enum RefundRequestErrorCode: String, Hashable, Sendable, Codable, CaseIterable {
    case duplicateRequest, failed
}

/// The cases of StoreKitTest's `SKTestError`.
public enum ControlErrorCode: String, Hashable, Sendable, Codable, CaseIterable {
    case fileNotFound, invalidAction, invalidProductIdentifier, invalidProductType, invalidURL
    case noSubscriptionFound, noTransactionFound, serviceUnavailable
}
