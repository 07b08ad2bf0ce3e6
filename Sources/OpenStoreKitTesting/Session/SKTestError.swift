import AppStoreSimulator
import Foundation
import OpenStoreKit

/// Why a test-session control failed, with the codes of Xcode's `SKTestError`.
public struct SKTestError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Hashable, Sendable, CaseIterable {
        case fileNotFound, invalidAction, invalidProductIdentifier, invalidProductType, invalidURL
        case noSubscriptionFound, noTransactionFound, serviceUnavailable
    }

    public let code: Code
    public let message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    init(_ error: AppStoreError) {
        switch error {
        case .control(let code, let message): self.init(code: Code(rawValue: code.rawValue) ?? .invalidAction, message: message)
        case .storage(let message): self.init(code: .serviceUnavailable, message: "storage: \(message)")
        default: self.init(code: .invalidAction, message: error.description)
        }
    }

    public var description: String { "SKTestError.\(code.rawValue): \(message)" }
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
