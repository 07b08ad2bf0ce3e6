import Foundation

/// The error domain of the original StoreKit API, as `SKErrorDomain`.
public let SKErrorDomain = "SKErrorDomain"

/// A failure of the original StoreKit API, as `SKError`.
///
/// It bridges to `NSError` as StoreKit's does: domain ``SKErrorDomain``, the code's raw value as the
/// error code, and a description in words, so `(error as NSError).code == SKError.paymentCancelled.rawValue`
/// tells a cancellation from a failure. `SKError.paymentCancelled` and the other static members are
/// codes, as in StoreKit, so `catch let error as SKError where error.code == .paymentCancelled` and
/// `(error as? SKError)?.code == .paymentCancelled` read the same.
public struct SKError: Error, Hashable, Sendable, CustomStringConvertible, CustomNSError, LocalizedError {
    /// The original API's error codes, with StoreKit's raw values.
    public enum Code: Int, Hashable, Sendable, CaseIterable {
        case unknown = 0
        case clientInvalid = 1
        case paymentCancelled = 2
        case paymentInvalid = 3
        case paymentNotAllowed = 4
        case storeProductNotAvailable = 5
        case cloudServicePermissionDenied = 6
        case cloudServiceNetworkConnectionFailed = 7
        case cloudServiceRevoked = 8
        case privacyAcknowledgementRequired = 9
        case unauthorizedRequestData = 10
        case invalidOfferIdentifier = 11
        case invalidSignature = 12
        case missingOfferParams = 13
        case invalidOfferPrice = 14
        case overlayCancelled = 15
        case overlayInvalidConfiguration = 16
        case overlayTimeout = 17
        case ineligibleForOffer = 18
        case unsupportedPlatform = 19
        case overlayPresentedInBackgroundScene = 20
        /// The account's payment method must be bound to the app first.
        case paymentMethodBindingConfigurationRequired = 21

        /// What the code means, in words.
        var meaning: String {
            switch self {
            case .unknown: return "An unknown error occurred."
            case .clientInvalid: return "The client is not allowed to make this request."
            case .paymentCancelled: return "The payment was cancelled."
            case .paymentInvalid: return "The payment is not valid."
            case .paymentNotAllowed: return "This device is not allowed to make the payment."
            case .storeProductNotAvailable: return "The product is not available in the current storefront."
            case .cloudServicePermissionDenied: return "Access to cloud service information is not allowed."
            case .cloudServiceNetworkConnectionFailed: return "The device could not connect to the store."
            case .cloudServiceRevoked: return "Permission to use the cloud service was revoked."
            case .privacyAcknowledgementRequired: return "The customer has not yet acknowledged the store's privacy policy."
            case .unauthorizedRequestData: return "The app is not entitled to the request data it sent."
            case .invalidOfferIdentifier: return "The offer identifier is not valid."
            case .invalidSignature: return "The offer signature is not valid."
            case .missingOfferParams: return "Parameters of the offer are missing."
            case .invalidOfferPrice: return "The offer price is not valid."
            case .overlayCancelled: return "The overlay was cancelled."
            case .overlayInvalidConfiguration: return "The overlay configuration is not valid."
            case .overlayTimeout: return "The overlay timed out."
            case .ineligibleForOffer: return "The customer is not eligible for the offer."
            case .unsupportedPlatform: return "The request is not supported on this platform."
            case .overlayPresentedInBackgroundScene: return "The overlay was presented in a background scene."
            case .paymentMethodBindingConfigurationRequired: return "The payment method needs to be set up for this app."
            }
        }

        /// What to do about it, in words.
        var recoverySuggestion: String? {
            switch self {
            case .paymentCancelled: return nil
            case .clientInvalid, .paymentNotAllowed: return "Check SKPaymentQueue.canMakePayments() before offering purchases."
            case .storeProductNotAvailable: return "Offer only products the store returns for the customer's storefront."
            case .invalidOfferIdentifier, .invalidSignature, .missingOfferParams, .invalidOfferPrice:
                return "Sign the offer again on the server with the app's in-app purchase key, and pass every field."
            case .ineligibleForOffer: return "Check eligibility before offering the offer."
            case .cloudServiceNetworkConnectionFailed: return "Check the network connection and try again."
            default: return "Try again later."
            }
        }
    }

    public let code: Code
    /// What went wrong, in words, beyond what the code says.
    public let message: String
    private let info: UserInfo

    /// The error's `userInfo`, which Foundation's `NSError` bridging carries (held in a box: its
    /// values need not be `Sendable`).
    private final class UserInfo: @unchecked Sendable {
        let values: [String: Any]
        init(_ values: [String: Any]) { self.values = values }
    }

    /// An error with `code` and `userInfo`, as StoreKit's `SKError(_:userInfo:)`; a
    /// `NSLocalizedDescriptionKey` in it is the error's description.
    public init(_ code: Code, userInfo: [String: Any] = [:]) {
        self.code = code
        self.message = ""
        self.info = UserInfo(userInfo)
    }

    /// An error with `code` and words on what went wrong beyond what the code says.
    public init(_ code: Code, message: String) {
        self.code = code
        self.message = message
        self.info = UserInfo([:])
    }

    public static func == (lhs: SKError, rhs: SKError) -> Bool { lhs.code == rhs.code && lhs.message == rhs.message }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
    }

    public var description: String { "SKError.\(code)\(message.isEmpty ? "" : ": \(message)")" }

    // MARK: Bridging

    public static var errorDomain: String { SKErrorDomain }
    public var errorCode: Int { code.rawValue }
    /// The error's user info: what it was made with, and its description under `NSLocalizedDescriptionKey`.
    public var userInfo: [String: Any] { errorUserInfo }
    public var errorUserInfo: [String: Any] {
        var values = info.values
        if values[NSLocalizedDescriptionKey] == nil { values[NSLocalizedDescriptionKey] = localizedDescriptionText }
        return values
    }
    public var errorDescription: String? { localizedDescriptionText }
    public var failureReason: String? { message.isEmpty ? code.meaning : message }
    public var recoverySuggestion: String? { code.recoverySuggestion }

    private var localizedDescriptionText: String {
        if let text = info.values[NSLocalizedDescriptionKey] as? String { return text }
        return message.isEmpty ? code.meaning : "\(code.meaning) \(message)"
    }

    // MARK: The codes, spelled as StoreKit's static members

    public static var unknown: Code { .unknown }
    public static var clientInvalid: Code { .clientInvalid }
    public static var paymentCancelled: Code { .paymentCancelled }
    public static var paymentInvalid: Code { .paymentInvalid }
    public static var paymentNotAllowed: Code { .paymentNotAllowed }
    public static var storeProductNotAvailable: Code { .storeProductNotAvailable }
    public static var cloudServicePermissionDenied: Code { .cloudServicePermissionDenied }
    public static var cloudServiceNetworkConnectionFailed: Code { .cloudServiceNetworkConnectionFailed }
    public static var cloudServiceRevoked: Code { .cloudServiceRevoked }
    public static var privacyAcknowledgementRequired: Code { .privacyAcknowledgementRequired }
    public static var unauthorizedRequestData: Code { .unauthorizedRequestData }
    public static var invalidOfferIdentifier: Code { .invalidOfferIdentifier }
    public static var invalidSignature: Code { .invalidSignature }
    public static var missingOfferParams: Code { .missingOfferParams }
    public static var invalidOfferPrice: Code { .invalidOfferPrice }
    public static var overlayCancelled: Code { .overlayCancelled }
    public static var overlayInvalidConfiguration: Code { .overlayInvalidConfiguration }
    public static var overlayTimeout: Code { .overlayTimeout }
    public static var ineligibleForOffer: Code { .ineligibleForOffer }
    public static var unsupportedPlatform: Code { .unsupportedPlatform }
    public static var overlayPresentedInBackgroundScene: Code { .overlayPresentedInBackgroundScene }
    public static var paymentMethodBindingConfigurationRequired: Code { .paymentMethodBindingConfigurationRequired }

    /// The original API's error for a StoreKit 2 error.
    init(storeKitError error: any Error) {
        switch error {
        case StoreKitError.userCancelled: self.init(.paymentCancelled)
        case StoreKitError.networkError: self.init(.cloudServiceNetworkConnectionFailed)
        case StoreKitError.notAvailableInStorefront: self.init(.storeProductNotAvailable)
        case let purchase as Product.PurchaseError:
            switch purchase {
            case .invalidQuantity: self.init(.paymentInvalid)
            case .productUnavailable: self.init(.storeProductNotAvailable)
            case .purchaseNotAllowed: self.init(.paymentNotAllowed)
            case .ineligibleForOffer: self.init(.ineligibleForOffer)
            case .invalidOfferIdentifier: self.init(.invalidOfferIdentifier)
            case .invalidOfferPrice: self.init(.invalidOfferPrice)
            case .invalidOfferSignature: self.init(.invalidSignature)
            case .missingOfferParameters: self.init(.missingOfferParams)
            case .paymentMethodBindingConfigurationRequired: self.init(.paymentMethodBindingConfigurationRequired)
            }
        default: self.init(.unknown, message: "\(error)")
        }
    }
}

/// Matches an error against a code, so `catch SKError.paymentCancelled` works as in StoreKit.
public func ~= (code: SKError.Code, error: any Error) -> Bool {
    (error as? SKError)?.code == code
}
