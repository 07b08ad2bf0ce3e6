import AppStoreModels
import Foundation

/// A failure of a StoreKit call that is not about one purchase, in StoreKit's cases.
public enum StoreKitError: Error, CustomStringConvertible {
    /// An unknown failure.
    case unknown
    /// The customer cancelled.
    case userCancelled
    /// The store could not be reached.
    case networkError(URLError)
    /// A failure in the system (here: the store or its connection), with the underlying error.
    case systemError(any Error)
    /// The product is not sold in the customer's storefront.
    case notAvailableInStorefront
    /// The customer is not entitled to what was asked for.
    case notEntitled
    /// The call is not supported here.
    case unsupported

    public var description: String {
        switch self {
        case .unknown: return "StoreKitError.unknown"
        case .userCancelled: return "StoreKitError.userCancelled"
        case .networkError(let error): return "StoreKitError.networkError(\(error.code.rawValue))"
        case .systemError(let error): return "StoreKitError.systemError(\(error))"
        case .notAvailableInStorefront: return "StoreKitError.notAvailableInStorefront"
        case .notEntitled: return "StoreKitError.notEntitled"
        case .unsupported: return "StoreKitError.unsupported"
        }
    }

    /// The case named `name`, with `message` kept for the cases that carry an error.
    init(caseName name: String, message: String) {
        switch name {
        case "userCancelled": self = .userCancelled
        case "networkError": self = .networkError(URLError(.notConnectedToInternet))
        case "systemError": self = .systemError(StoreConnectionError(message: message))
        case "notAvailableInStorefront": self = .notAvailableInStorefront
        case "notEntitled": self = .notEntitled
        case "unsupported": self = .unsupported
        default: self = .unknown
        }
    }
}

/// A failure of the store connection itself, carried by ``StoreKitError/systemError(_:)``.
public struct StoreConnectionError: Error, Hashable, CustomStringConvertible {
    public var message: String
    public var description: String { message }

    public init(message: String) {
        self.message = message
    }
}

extension StoreTransportError {
    /// The error StoreKit code sees: `StoreKitError`, `Product.PurchaseError` or `Transaction.RefundRequestError`.
    public var storeKitError: any Error {
        switch self {
        case .storeKit(let name, let message): return StoreKitError(caseName: name, message: message)
        case .purchase(let name, let message):
            return Product.PurchaseError(caseName: name) ?? StoreKitError.systemError(StoreConnectionError(message: message))
        case .refundRequest(let name, _): return name == "duplicateRequest" ? Transaction.RefundRequestError.duplicateRequest : .failed
        case .storage(let failure): return StoreKitError.systemError(StoreConnectionError(message: "storage: \(failure.message)"))
        case .other(let message): return StoreKitError.systemError(StoreConnectionError(message: message))
        }
    }
}

/// Runs a transport call, turning transport failures into StoreKit's errors.
func storeKitCall<Result>(_ body: () async throws -> Result) async throws -> Result {
    do {
        return try await body()
    } catch let error as StoreTransportError {
        throw error.storeKitError
    } catch is CancellationError {
        throw CancellationError()
    } catch let error as StoreKitError {
        throw error
    } catch {
        throw StoreKitError.systemError(error)
    }
}

/// A request the App Store refused as malformed (Advanced Commerce API purchases), with its code
/// and Apple's message.
public struct InvalidRequestError: Error, Sendable {
    public let code: Int64
    public let message: String

    public init(code: Int64, message: String) {
        self.code = code
        self.message = message
    }
}
