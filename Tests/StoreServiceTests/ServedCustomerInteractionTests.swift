import AppStoreSimulator
import AppStoreSimulatorSQL
import Foundation
import OpenStoreKit
import OpenStoreKitTesting
import StoreService
import Testing
import TestSupport

/// Messages, sheets, purchase intents, storefront changes and payment restrictions work the same
/// through `storekit serve`'s device and admin APIs as in process.
@Suite(.timeLimit(.minutes(10)))
struct ServedCustomerInteractionTests {
    @Test("over HTTP: a purchase intent, a storefront change, a price-increase message answered in its sheet, a restriction")
    func servedCustomerInteraction() async throws {
        try await withServedStore(phoneAccount: nil) { _, server in
            let session = try await TestSession(server: server.url)
            let phone = try await session.client(device: "phone")

            try await session.sendPurchaseIntent(productIdentifier: ExampleShop.premiumMonthly, device: "phone")
            let intent = try await firstElement(of: phone.purchaseIntents)
            #expect(intent.product.id == ExampleShop.premiumMonthly)
            let subscription = try await intent.product.purchase()
            guard case .success(.verified(let transaction)) = subscription else { throw TestFailure("expected a verified purchase") }

            var messages = phone.messages.makeAsyncIterator()
            try await session.requestPriceIncreaseConsentForTransaction(identifier: transaction.id)
            let message = try #require(await messages.next())
            #expect(message.reason == .priceIncreaseConsent)
            try await session.queueCustomerResponse(.acceptPriceIncrease, in: .priceIncreaseConsent, device: "phone")
            try await message.display()
            let status = try #require(try await phone.subscriptionStatuses(groupID: ExampleShop.plus).first)
            guard case .verified(let renewal) = status.renewalInfo else { throw TestFailure("expected verified renewal info") }
            #expect(renewal.priceIncreaseStatus == .agreed)

            try await session.configureAccount("default", storefront: "DEU")
            #expect(try await firstElement(of: phone.storefrontUpdates).countryCode == "DEU")

            #expect(await phone.withCurrent { AppStore.canMakePayments })
            try await session.setPurchasesAllowed(false, account: "default")
            try await phone.sync()
            #expect(await !phone.withCurrent { AppStore.canMakePayments })
        }
    }
}
