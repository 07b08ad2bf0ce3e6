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

/// The first element of a sequence, or a failure after `seconds`.
func firstElement<S: AsyncSequence & Sendable>(of sequence: S, within seconds: Double = 10) async throws -> S.Element where S.Element: Sendable {
    try await withThrowingTaskGroup(of: S.Element?.self) { group in
        group.addTask {
            for try await element in sequence { return element }
            return nil
        }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let element = first else {
            throw TestFailure("no element arrived within \(seconds) s")
        }
        return element
    }
}

/// Everything a finite sequence yields.
func collect<S: AsyncSequence>(_ sequence: S) async throws -> [S.Element] {
    var elements: [S.Element] = []
    for try await element in sequence { elements.append(element) }
    return elements
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
