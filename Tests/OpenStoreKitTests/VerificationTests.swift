import AppStoreSigning
import AppStoreSimulator
import Foundation
import OpenStoreKit
import OpenStoreKitTesting
import StoreKitCatalog
import Testing
import TestSupport

/// A transport that hands out what another transport signed, after changing it: to prove the client
/// checks everything itself.
struct TamperingTransport: StoreTransport {
    let base: any StoreTransport
    /// Which device's signed data to hand out instead of the asking device's.
    var impersonatedDevice: String?
    var tamper: @Sendable (String) -> String = { $0 }

    func verificationContext(device: String) async throws -> VerificationContext { try await base.verificationContext(device: device) }
    func products(for identifiers: [String], device: String) async throws -> [CatalogProduct] {
        try await base.products(for: identifiers, device: device)
    }
    func purchase(_ request: TransportPurchaseRequest) async throws -> TransportPurchaseOutcome {
        var request = request
        request.device = impersonatedDevice ?? request.device
        switch try await base.purchase(request) {
        case .success(let item): return .success(SignedItem(jws: tamper(item.jws), simulatedVerificationFailure: item.simulatedVerificationFailure))
        case let other: return other
        }
    }
    func transactions(_ view: TransactionView, device: String) async throws -> [SignedItem] {
        try await base.transactions(view, device: impersonatedDevice ?? device).map { SignedItem(jws: tamper($0.jws)) }
    }
    func finish(transactionID: UInt64, device: String) async throws { try await base.finish(transactionID: transactionID, device: device) }
    func launch(device: String) async throws { try await base.launch(device: device) }
    func nextUpdates(device: String, channel: TransportUpdate.Channel) async throws -> [TransportUpdate] {
        try await base.nextUpdates(device: device, channel: channel)
    }
    func subscriptionStatuses(groupID: String, device: String) async throws -> [TransportStatus] {
        try await base.subscriptionStatuses(groupID: groupID, device: device)
    }
    func isEligibleForIntroOffer(groupID: String, device: String) async throws -> Bool {
        try await base.isEligibleForIntroOffer(groupID: groupID, device: device)
    }
    func appTransaction(device: String) async throws -> SignedItem { try await base.appTransaction(device: device) }
    func storefront(device: String) async throws -> StoreKitCatalog.Storefront { try await base.storefront(device: device) }
    func sync(device: String) async throws { try await base.sync(device: device) }
    func requestRefund(transactionID: UInt64, device: String) async throws { try await base.requestRefund(transactionID: transactionID, device: device) }
    func presentSheet(_ sheet: String, device: String, about transactionID: UInt64?) async throws {
        try await base.presentSheet(sheet, device: device, about: transactionID)
    }
    func canMakePayments(device: String) async throws -> Bool { try await base.canMakePayments(device: device) }
    func storePolicies(device: String) async throws -> StorePolicies { try await base.storePolicies(device: device) }
    func requestReview(device: String) async throws -> Bool { try await base.requestReview(device: device) }
    func promotedProducts(device: String) async throws -> [TransportPromotion] { try await base.promotedProducts(device: device) }
    func updatePromotedProducts(_ promotions: [TransportPromotion], device: String) async throws {
        try await base.updatePromotedProducts(promotions, device: device)
    }
}

@Suite("Verification on the device side", .timeLimit(.minutes(10)))
struct VerificationTests {
    /// Rewrites the product identifier in the payload, keeping the original signature.
    static func alterPayload(_ jws: String) -> String {
        var parts = jws.split(separator: ".").map(String.init)
        let json = String(decoding: Base64URL.decode(parts[1])!, as: UTF8.self)
        parts[1] = Base64URL.encode(Array(json.replacingOccurrences(of: "com.example.shop.pro", with: "com.example.shop.gems").utf8))
        return parts.joined(separator: ".")
    }

    @Test("a transaction signed for another device is unverified with invalidDeviceVerification")
    func otherDevice() async throws {
        let session = try Shop.session()
        _ = try await session.client(device: "phone", account: "alice")
        _ = try await session.client(device: "tablet", account: "alice")
        let impostor = TamperingTransport(base: session.transport, impersonatedDevice: "phone")
        let tablet = try await StoreClient.connect(to: impostor, device: "tablet")
        let result = try await tablet.purchase(productID: Shop.pro)
        guard case .success(.unverified(let transaction, let error)) = result else { Issue.record("expected unverified, got \(result)"); return }
        #expect(error == .invalidDeviceVerification)
        #expect(transaction.productID == Shop.pro)
    }

    @Test("an altered payload is unverified with invalidSignature; garbage is dropped")
    func alteredPayload() async throws {
        let session = try Shop.session()
        let honest = try await session.client(device: "phone")
        _ = try await honest.purchase(productID: Shop.pro)
        let tampering = TamperingTransport(base: session.transport, tamper: VerificationTests.alterPayload)
        let phone = try await StoreClient.connect(to: tampering, device: "phone")
        let results = try await collect(phone.allTransactions)
        #expect(results.map(\.verificationError) == [.invalidSignature])
        #expect(results.first?.unsafePayloadValue.productID == "com.example.shop.gems")
        let garbage = TamperingTransport(base: session.transport, tamper: { _ in "not.a.jws" })
        let confused = try await StoreClient.connect(to: garbage, device: "phone")
        #expect(try await collect(confused.allTransactions).isEmpty)
    }

    @Test("data from a store with another root is unverified with invalidCertificateChain")
    func foreignRoot() async throws {
        let trusted = try Shop.session()
        let foreign = try Shop.session()
        let phone = try await trusted.client(device: "phone")
        let foreignClient = try await foreign.client(device: "phone")
        let foreignJWS = try await foreignClient.purchase(productID: Shop.pro)
        guard case .success(let foreignResult) = foreignJWS else { Issue.record("expected success"); return }
        let crossed = TamperingTransport(base: trusted.transport, tamper: { _ in foreignResult.jwsRepresentation })
        let confused = try await StoreClient.connect(to: crossed, device: "phone")
        _ = try await phone.purchase(productID: Shop.wizard)
        let results = try await collect(confused.allTransactions)
        #expect(results.map(\.verificationError) == [.invalidCertificateChain])
    }

    @Test("a simulated verification failure makes every signed value unverified with that error",
          arguments: [VerificationErrorCodeName.invalidSignature, .revokedCertificate, .invalidDeviceVerification])
    func simulatedFailure(code: VerificationErrorCodeName) async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        try await session.setSimulatedError(.verification(code.storeCode), forAPI: .verification)
        let result = try await phone.purchase(productID: Shop.pro)
        guard case .success(.unverified(_, let error)) = result else { Issue.record("expected unverified"); return }
        #expect(error == code.clientError)
        let appTransaction = try await phone.appTransaction()
        #expect(appTransaction.verificationError == code.appTransactionError)
    }
}

/// Verification failures a test session can simulate, with what the client reports for each.
enum VerificationErrorCodeName: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case invalidSignature, revokedCertificate, invalidDeviceVerification

    var testDescription: String { rawValue }

    var storeCode: VerificationErrorCode { VerificationErrorCode(rawValue: rawValue)! }

    var clientError: VerificationResult<Transaction>.VerificationError {
        switch self {
        case .invalidSignature: return .invalidSignature
        case .revokedCertificate: return .revokedCertificate
        case .invalidDeviceVerification: return .invalidDeviceVerification
        }
    }

    var appTransactionError: VerificationResult<AppTransaction>.VerificationError {
        switch self {
        case .invalidSignature: return .invalidSignature
        case .revokedCertificate: return .revokedCertificate
        case .invalidDeviceVerification: return .invalidDeviceVerification
        }
    }
}
