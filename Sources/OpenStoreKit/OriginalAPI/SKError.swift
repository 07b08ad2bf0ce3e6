import Foundation

/// A failure of the original StoreKit API, as `SKError`.
public struct SKError: Error, Hashable, Sendable, CustomStringConvertible {
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
    }

    public let code: Code
    /// What went wrong, in words.
    public let message: String

    public init(_ code: Code, message: String = "") {
        self.code = code
        self.message = message
    }

    public var description: String { "SKError.\(code)\(message.isEmpty ? "" : ": \(message)")" }

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
            }
        default: self.init(.unknown, message: "\(error)")
        }
    }
}
