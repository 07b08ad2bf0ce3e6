import AppStoreSimulator
import Foundation
import StoreKit

// The failures `SKTestSession.setSimulatedError(_:forAPI:)` makes StoreKit's APIs throw, in Xcode's
// shape: one `FailableStoreKitAPI` value per API (`.loadProducts`, `.purchase`, …), each with the
// enumeration of failures it can throw (`SKTestFailures.Purchase.purchase(.productUnavailable)`).

/// A failure an API can be made to throw, identified by its error code.
public struct _SKTestFailureCode: Equatable, Sendable {
    let failure: SimulatedFailure
}

/// A failure of one of StoreKit's APIs, for ``SKTestSession/setSimulatedError(_:forAPI:)``.
public protocol SKTestFailure: Equatable, Sendable {
    init?(_fromErrorCode code: _SKTestFailureCode)
    var _errorCode: _SKTestFailureCode { get }
}

/// One of StoreKit's APIs a session can make fail, and the failures it can throw.
public protocol FailableStoreKitAPI<Failure>: Sendable {
    associatedtype Failure: SKTestFailure
}

/// The failures of each API that can be made to fail.
public enum SKTestFailures {
    /// `Product.products(for:)`.
    public enum LoadProducts: SKTestFailure {
        case generic(StoreKitError)
    }

    /// `Product.purchase(options:)`.
    public enum Purchase: SKTestFailure {
        case generic(StoreKitError)
        case purchase(Product.PurchaseError)
    }

    /// Verification of signed values: every transaction, renewal info and app transaction comes back
    /// unverified with this error.
    public enum Verification: SKTestFailure {
        case verification(VerificationResult<Any>.VerificationError)
    }

    /// `AppStore.sync()`.
    public enum AppStoreSync: SKTestFailure {
        case generic(StoreKitError)
    }

    /// `Product.SubscriptionInfo.status` and the status sequences.
    public enum SubscriptionStatus: SKTestFailure {
        case generic(StoreKitError)
    }

    /// `AppTransaction.shared`.
    public enum AppTransaction: SKTestFailure {
        case generic(StoreKitError)
    }

    /// `AppStore.showManageSubscriptions(in:)`.
    public enum ManageSubscriptions: SKTestFailure {
        case generic(StoreKitError)
    }

    /// `Transaction.beginRefundRequest(in:)`.
    public enum RefundRequest: SKTestFailure {
        case generic(StoreKitError)
        case refundRequest(Transaction.RefundRequestError)
    }

    /// `AppStore.presentOfferCodeRedeemSheet(in:)`.
    public enum OfferCodeRedeem: SKTestFailure {
        case generic(StoreKitError)
    }
}

/// `Product.products(for:)`, as ``FailableStoreKitAPI/loadProducts``.
public struct StoreKitLoadProductsAPI: FailableStoreKitAPI {
    public typealias Failure = SKTestFailures.LoadProducts
    public init() {}
}

/// `Product.purchase(options:)`, as ``FailableStoreKitAPI/purchase``.
public struct StoreKitPurchaseAPI: FailableStoreKitAPI {
    public typealias Failure = SKTestFailures.Purchase
    public init() {}
}

/// Verification of signed values, as ``FailableStoreKitAPI/verification``.
public struct StoreKitVerificationAPI: FailableStoreKitAPI {
    public typealias Failure = SKTestFailures.Verification
    public init() {}
}

/// `AppStore.sync()`, as ``FailableStoreKitAPI/appStoreSync``.
public struct StoreKitAppStoreSyncAPI: FailableStoreKitAPI {
    public typealias Failure = SKTestFailures.AppStoreSync
    public init() {}
}

/// Subscription statuses, as ``FailableStoreKitAPI/subscriptionStatus``.
public struct StoreKitSubscriptionStatusAPI: FailableStoreKitAPI {
    public typealias Failure = SKTestFailures.SubscriptionStatus
    public init() {}
}

/// `AppTransaction.shared`, as ``FailableStoreKitAPI/appTransaction``.
public struct StoreKitAppTransactionAPI: FailableStoreKitAPI {
    public typealias Failure = SKTestFailures.AppTransaction
    public init() {}
}

/// The manage-subscriptions sheet, as ``FailableStoreKitAPI/manageSubscriptions``.
public struct StoreKitManageSubscriptionsAPI: FailableStoreKitAPI {
    public typealias Failure = SKTestFailures.ManageSubscriptions
    public init() {}
}

/// The refund request sheet, as ``FailableStoreKitAPI/refundRequest``.
public struct StoreKitRefundRequestAPI: FailableStoreKitAPI {
    public typealias Failure = SKTestFailures.RefundRequest
    public init() {}
}

/// The offer code redemption sheet, as ``FailableStoreKitAPI/offerCodeRedeem``.
public struct StoreKitOfferCodeRedeemAPI: FailableStoreKitAPI {
    public typealias Failure = SKTestFailures.OfferCodeRedeem
    public init() {}
}

extension FailableStoreKitAPI where Self == StoreKitLoadProductsAPI {
    public static var loadProducts: StoreKitLoadProductsAPI { .init() }
}

extension FailableStoreKitAPI where Self == StoreKitPurchaseAPI {
    public static var purchase: StoreKitPurchaseAPI { .init() }
}

extension FailableStoreKitAPI where Self == StoreKitVerificationAPI {
    public static var verification: StoreKitVerificationAPI { .init() }
}

extension FailableStoreKitAPI where Self == StoreKitAppStoreSyncAPI {
    public static var appStoreSync: StoreKitAppStoreSyncAPI { .init() }
}

extension FailableStoreKitAPI where Self == StoreKitSubscriptionStatusAPI {
    public static var subscriptionStatus: StoreKitSubscriptionStatusAPI { .init() }
}

extension FailableStoreKitAPI where Self == StoreKitAppTransactionAPI {
    public static var appTransaction: StoreKitAppTransactionAPI { .init() }
}

extension FailableStoreKitAPI where Self == StoreKitManageSubscriptionsAPI {
    public static var manageSubscriptions: StoreKitManageSubscriptionsAPI { .init() }
}

extension FailableStoreKitAPI where Self == StoreKitRefundRequestAPI {
    public static var refundRequest: StoreKitRefundRequestAPI { .init() }
}

extension FailableStoreKitAPI where Self == StoreKitOfferCodeRedeemAPI {
    public static var offerCodeRedeem: StoreKitOfferCodeRedeemAPI { .init() }
}

// MARK: Failures as the store simulates them

extension FailableStoreKitAPI {
    /// The store's name for the API.
    var simulatedAPI: FailableAPI {
        switch self {
        case is StoreKitLoadProductsAPI: return .loadProducts
        case is StoreKitPurchaseAPI: return .purchase
        case is StoreKitVerificationAPI: return .verification
        case is StoreKitAppStoreSyncAPI: return .appStoreSync
        case is StoreKitSubscriptionStatusAPI: return .subscriptionStatus
        case is StoreKitAppTransactionAPI: return .appTransaction
        case is StoreKitManageSubscriptionsAPI: return .manageSubscriptions
        case is StoreKitRefundRequestAPI: return .refundRequest
        default: return .offerCodeRedeem
        }
    }
}

extension StoreKitError {
    /// The store's code for the error.
    var simulatedCode: StoreKitErrorCode {
        switch self {
        case .unknown: return .unknown
        case .userCancelled: return .userCancelled
        case .networkError: return .networkError
        case .systemError: return .systemError
        case .notAvailableInStorefront: return .notAvailableInStorefront
        case .notEntitled: return .notEntitled
        case .unsupported: return .unsupported
        }
    }

    /// The error for the store's code, as the client throws it.
    init(simulatedCode code: StoreKitErrorCode) {
        switch code {
        case .unknown: self = .unknown
        case .userCancelled: self = .userCancelled
        case .networkError: self = .networkError(URLError(.notConnectedToInternet))
        case .systemError: self = .systemError(StoreConnectionError(message: "simulated failure"))
        case .notAvailableInStorefront: self = .notAvailableInStorefront
        case .notEntitled: self = .notEntitled
        case .unsupported: self = .unsupported
        }
    }
}

extension Product.PurchaseError {
    var simulatedCode: PurchaseErrorCode { PurchaseErrorCode(rawValue: "\(self)") ?? .productUnavailable }
    init?(simulatedCode code: PurchaseErrorCode) {
        guard let match = Self.allCases.first(where: { "\($0)" == code.rawValue }) else { return nil }
        self = match
    }
}

extension VerificationResult.VerificationError {
    var simulatedCode: VerificationErrorCode { VerificationErrorCode(rawValue: "\(self)") ?? .invalidSignature }
    init?(simulatedCode code: VerificationErrorCode) {
        let all: [Self] = [.revokedCertificate, .invalidCertificateChain, .invalidDeviceVerification, .invalidEncoding,
                           .invalidSignature, .missingRequiredProperties]
        guard let match = all.first(where: { "\($0)" == code.rawValue }) else { return nil }
        self = match
    }
}

extension Transaction.RefundRequestError {
    var simulatedCode: RefundRequestErrorCode { self == .duplicateRequest ? .duplicateRequest : .failed }
    init(simulatedCode code: RefundRequestErrorCode) {
        self = code == .duplicateRequest ? .duplicateRequest : .failed
    }
}

extension SKTestFailure {
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs._errorCode == rhs._errorCode }
}

extension SKTestFailures.Purchase {
    public init?(_fromErrorCode code: _SKTestFailureCode) {
        switch code.failure {
        case .generic(let generic): self = .generic(StoreKitError(simulatedCode: generic))
        case .purchase(let purchase):
            guard let error = Product.PurchaseError(simulatedCode: purchase) else { return nil }
            self = .purchase(error)
        default: return nil
        }
    }

    public var _errorCode: _SKTestFailureCode {
        switch self {
        case .generic(let error): return _SKTestFailureCode(failure: .generic(error.simulatedCode))
        case .purchase(let error): return _SKTestFailureCode(failure: .purchase(error.simulatedCode))
        }
    }
}

extension SKTestFailures.Verification {
    public init?(_fromErrorCode code: _SKTestFailureCode) {
        guard case .verification(let verification) = code.failure,
              let error = VerificationResult<Any>.VerificationError(simulatedCode: verification) else { return nil }
        self = .verification(error)
    }

    public var _errorCode: _SKTestFailureCode {
        switch self { case .verification(let error): return _SKTestFailureCode(failure: .verification(error.simulatedCode)) }
    }
}

extension SKTestFailures.RefundRequest {
    public init?(_fromErrorCode code: _SKTestFailureCode) {
        switch code.failure {
        case .generic(let generic): self = .generic(StoreKitError(simulatedCode: generic))
        case .refundRequest(let refund): self = .refundRequest(Transaction.RefundRequestError(simulatedCode: refund))
        default: return nil
        }
    }

    public var _errorCode: _SKTestFailureCode {
        switch self {
        case .generic(let error): return _SKTestFailureCode(failure: .generic(error.simulatedCode))
        case .refundRequest(let error): return _SKTestFailureCode(failure: .refundRequest(error.simulatedCode))
        }
    }
}

/// The failure enumerations whose only case is `generic(StoreKitError)`.
protocol GenericOnlyFailure: SKTestFailure {
    static func generic(_ error: StoreKitError) -> Self
    var genericError: StoreKitError { get }
}

extension GenericOnlyFailure {
    public init?(_fromErrorCode code: _SKTestFailureCode) {
        guard case .generic(let generic) = code.failure else { return nil }
        self = .generic(StoreKitError(simulatedCode: generic))
    }

    public var _errorCode: _SKTestFailureCode { _SKTestFailureCode(failure: .generic(genericError.simulatedCode)) }
}

extension SKTestFailures.LoadProducts: GenericOnlyFailure {
    var genericError: StoreKitError { switch self { case .generic(let error): return error } }
}

extension SKTestFailures.AppStoreSync: GenericOnlyFailure {
    var genericError: StoreKitError { switch self { case .generic(let error): return error } }
}

extension SKTestFailures.SubscriptionStatus: GenericOnlyFailure {
    var genericError: StoreKitError { switch self { case .generic(let error): return error } }
}

extension SKTestFailures.AppTransaction: GenericOnlyFailure {
    var genericError: StoreKitError { switch self { case .generic(let error): return error } }
}

extension SKTestFailures.ManageSubscriptions: GenericOnlyFailure {
    var genericError: StoreKitError { switch self { case .generic(let error): return error } }
}

extension SKTestFailures.OfferCodeRedeem: GenericOnlyFailure {
    var genericError: StoreKitError { switch self { case .generic(let error): return error } }
}
