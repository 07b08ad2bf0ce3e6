import Foundation
import OpenStoreKit
import OpenStoreKitTesting
import TestSupport

typealias Shop = ExampleShop

extension ExampleShop {
    /// The example shop in a fresh test session.
    static func session() throws -> TestSession {
        try TestSession(contentsOf: file, bundleID: "com.example.shop")
    }
}

extension VerificationResult {
    /// The verified value, or a test failure naming the verification error.
    func verifiedValue() throws -> SignedType {
        switch self {
        case .verified(let value): return value
        case .unverified(_, let error): throw TestFailure("expected a verified value, got \(error)")
        }
    }
}

extension Product.PurchaseResult {
    /// The verified transaction of a successful purchase, or a test failure.
    func verifiedTransaction() throws -> Transaction {
        guard case .success(let result) = self else { throw TestFailure("expected a successful purchase, got \(self)") }
        return try result.verifiedValue()
    }
}
