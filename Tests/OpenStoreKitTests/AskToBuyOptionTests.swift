import AppStoreModels
import Foundation
import OpenStoreKit
import OpenStoreKitTesting
import Testing
import TestSupport

/// `Product.PurchaseOption.simulatesAskToBuyInSandbox` does what it says where it applies, as Apple's.
@Suite(.timeLimit(.minutes(10)))
struct AskToBuyOptionTests {
    static func purchase(environment: AppStoreModels.Environment, asking: Bool) async throws -> Product.PurchaseResult {
        let session = try TestSession(contentsOf: Shop.file, bundleID: "com.example.shop", environment: environment,
                                      appAppleID: environment == .xcode ? nil : 1_470_168_868)
        let phone = try await session.client(device: "phone")
        let pro = try #require(try await phone.products(for: [Shop.pro]).first)
        return try await pro.purchase(options: asking ? [.simulatesAskToBuyInSandbox(true)] : [])
    }

    @Test("in a Sandbox store the purchase waits for a parent; without the option it completes")
    func sandboxHonoursTheOption() async throws {
        guard case .pending = try await Self.purchase(environment: .sandbox, asking: true) else { throw TestFailure("expected pending") }
        guard case .success = try await Self.purchase(environment: .sandbox, asking: false) else { throw TestFailure("expected success") }
    }

    @Test("Xcode and Production stores ignore it, as Apple's do", arguments: [AppStoreModels.Environment.xcode, .production])
    func otherEnvironmentsIgnoreIt(_ environment: AppStoreModels.Environment) async throws {
        guard case .success = try await Self.purchase(environment: environment, asking: true) else { throw TestFailure("expected success") }
    }

    @Test("the option travels in the device API's purchase body")
    func optionInTheDeviceAPI() throws {
        let request = try TransportPurchaseRequest(productID: Shop.pro, device: "phone", options: [.simulatesAskToBuyInSandbox(true)])
        #expect(request.simulatesAskToBuyInSandbox)
        let body = try JSONDecoder().decode(DeviceAPI.PurchaseBody.self, from: try JSONEncoder().encode(DeviceAPI.PurchaseBody(request)))
        #expect(body.request(device: "phone")?.simulatesAskToBuyInSandbox == true)
    }
}
