import AppStoreModels
import AppStoreSimulator
import Foundation
import OpenStoreKit

/// The error domain of StoreKit testing's controls, as `SKTestErrorDomain`.
public let SKTestErrorDomain = "SKTestErrorDomain"

/// Why a test-session control failed, as Xcode's `SKTestError`: its codes, with their raw values,
/// and a message saying what went wrong.
///
/// It bridges to `NSError` as Xcode's does (domain ``SKTestErrorDomain``, the code's raw value), and
/// its static members are codes, so `catch SKTestError.noTransactionFound` and
/// `catch let error as SKTestError where error.code == .noTransactionFound` both work.
public struct SKTestError: Error, Hashable, Sendable, CustomStringConvertible, CustomNSError, LocalizedError {
    /// The codes of Xcode's `SKTestError`, with their raw values.
    public enum Code: Int, Hashable, Sendable, CaseIterable {
        case serviceUnavailable = 0
        case invalidProductIdentifier = 1
        case invalidProductType = 2
        case invalidURL = 3
        case fileNotFound = 4
        case noSubscriptionFound = 5
        case noTransactionFound = 6
        case invalidAction = 7

        /// The code's name, as the store's control errors spell it.
        var name: String { "\(self)" }
    }

    public let code: Code
    public let message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    init(_ error: AppStoreError) {
        switch error {
        case .control(let code, let message): self.init(code: Code.allCases.first { $0.name == code.rawValue } ?? .invalidAction, message: message)
        case .storage(let failure): self.init(code: .serviceUnavailable, message: "storage: \(failure.message)")
        default: self.init(code: .invalidAction, message: error.description)
        }
    }

    public var description: String { "SKTestError.\(code.name): \(message)" }

    // MARK: Bridging

    public static var errorDomain: String { SKTestErrorDomain }
    public var errorCode: Int { code.rawValue }
    public var errorUserInfo: [String: Any] { [NSLocalizedDescriptionKey: message] }
    public var errorDescription: String? { message }

    // MARK: The codes, spelled as Xcode's static members

    public static var serviceUnavailable: Code { .serviceUnavailable }
    public static var invalidProductIdentifier: Code { .invalidProductIdentifier }
    public static var invalidProductType: Code { .invalidProductType }
    public static var invalidURL: Code { .invalidURL }
    public static var fileNotFound: Code { .fileNotFound }
    public static var noSubscriptionFound: Code { .noSubscriptionFound }
    public static var noTransactionFound: Code { .noTransactionFound }
    public static var invalidAction: Code { .invalidAction }
}

extension SKTestError.Code {
    /// Matches an error against a code, so `catch SKTestError.fileNotFound` works as with Xcode's.
    public static func ~= (code: SKTestError.Code, error: any Error) -> Bool {
        (error as? SKTestError)?.code == code
    }
}

extension SKError.Code {
    /// The failure the store simulates for this code (`SKTestSession.failureError`).
    var simulatedFailure: SimulatedFailure {
        switch self {
        case .invalidOfferIdentifier: return .purchase(.invalidOfferIdentifier)
        case .invalidSignature: return .purchase(.invalidOfferSignature)
        case .missingOfferParams: return .purchase(.missingOfferParameters)
        case .invalidOfferPrice: return .purchase(.invalidOfferPrice)
        case .paymentCancelled: return .generic(.userCancelled)
        default: return .generic(.unknown)
        }
    }

    init(simulatedFailure failure: SimulatedFailure) {
        switch failure {
        case .purchase(.invalidOfferIdentifier): self = .invalidOfferIdentifier
        case .purchase(.invalidOfferSignature): self = .invalidSignature
        case .purchase(.missingOfferParameters): self = .missingOfferParams
        case .purchase(.invalidOfferPrice): self = .invalidOfferPrice
        case .generic(.userCancelled): self = .paymentCancelled
        default: self = .unknown
        }
    }
}
