import Foundation
import OpenStoreKit
import OpenStoreKitTesting
import Testing
import TestSupport

// The test shown in the README, kept here so the README's code compiles and passes.
@Test("README: buy monthly, a month passes, the renewal arrives, a refund revokes")
func monthlyRenewsThenRefundRevokes() async throws {
    let shop = ExampleShop.file
    let session = try TestSession(contentsOf: shop, bundleID: "com.example.shop")
    let phone = try await session.client(device: "phone")
    let monthly = try await phone.products(for: ["com.example.shop.plus.premium.monthly"])[0]

    guard case .success(.verified(let first)) = try await monthly.purchase() else { Issue.record("not bought"); return }
    await first.finish()

    try await session.advance(byMonths: 1)                       // the subscription renews
    var renewalID: UInt64?
    for await case .verified(let renewal) in phone.transactionUpdates {
        #expect(renewal.originalID == first.id && renewal.reason == .renewal)
        renewalID = renewal.id
        await renewal.finish()
        break
    }

    try await session.refundTransaction(identifier: try #require(renewalID))
    let status = try await #require(monthly.subscription).status[0]
    #expect(status.state == .revoked)
}
