import Foundation
import OpenStoreKit
import OpenStoreKitTesting
import Testing
import TestSupport

@Suite("Subscriptions through the client: statuses, renewals, billing problems, refunds", .timeLimit(.minutes(10)))
struct SubscriptionClientTests {
    @Test("buying uses the introductory offer once; status is subscribed with verified renewal info")
    func subscribeWithIntroOffer() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        let monthly = try #require(try await phone.products(for: [Shop.premiumMonthly]).first)
        let subscription = try #require(monthly.subscription)
        #expect(await subscription.isEligibleForIntroOffer)
        let transaction = try await monthly.purchase().verifiedTransaction()
        #expect(transaction.offer?.type == .introductory)
        #expect(transaction.offer?.paymentMode == .payAsYouGo)
        #expect(transaction.subscriptionGroupID == Shop.plus)
        #expect(!(await subscription.isEligibleForIntroOffer))

        let statuses = try await subscription.status
        #expect(statuses.count == 1)
        let status = try #require(statuses.first)
        #expect(status.state == .subscribed)
        let renewal = try status.renewalInfo.verifiedValue()
        #expect(renewal.willAutoRenew)
        #expect(renewal.currentProductID == Shop.premiumMonthly)
        #expect(renewal.originalTransactionID == transaction.originalID)
        let viaTransaction = await transaction.subscriptionStatus
        #expect(viaTransaction?.state == .subscribed)
    }

    @Test("a month later the renewal arrives through updates with the same original ID, and Status.updates reports it")
    func renewalArrivesThroughUpdates() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        let first = try await phone.purchase(productID: Shop.premiumMonthly).verifiedTransaction()
        await first.finish()
        try await session.advance(byMonths: 1)
        try await session.advance(byDays: 1)
        let renewal = try await firstElement(of: phone.transactionUpdates).verifiedValue()
        #expect(renewal.originalID == first.id)
        #expect(renewal.id != first.id)
        #expect(renewal.reason == .renewal)
        #expect(renewal.purchaseDate == first.expirationDate)
        let status = try await firstElement(of: phone.statusUpdates)
        #expect(status.state == .subscribed)
    }

    @Test("billing retry with grace: entitled in grace, not in retry; resolving renews")
    func billingRetryAndGrace() async throws {
        let session = try Shop.session()
        session.shouldEnterBillingRetryOnRenewal = true
        session.billingGracePeriodIsEnabled = true
        let phone = try await session.client(device: "phone")
        let first = try await phone.purchase(productID: Shop.standardMonthly).verifiedTransaction()
        await first.finish()
        try await session.advance(to: try #require(first.expirationDate).addingTimeInterval(60))
        var status = try #require(try await phone.subscriptionStatuses(groupID: Shop.plus).first)
        #expect(status.state == .inGracePeriod)
        #expect(status.state.isEntitled)
        let grace = try status.renewalInfo.verifiedValue()
        #expect(grace.isInBillingRetry)
        let graceEnd = try #require(grace.gracePeriodExpirationDate)
        #expect(try await collect(phone.currentEntitlements).count == 1)

        try await session.advance(to: graceEnd.addingTimeInterval(60))
        status = try #require(try await phone.subscriptionStatuses(groupID: Shop.plus).first)
        #expect(status.state == .inBillingRetryPeriod)
        #expect(try await collect(phone.currentEntitlements).isEmpty)

        session.shouldEnterBillingRetryOnRenewal = false
        try await session.resolveIssueForTransaction(identifier: first.id)
        status = try #require(try await phone.subscriptionStatuses(groupID: Shop.plus).first)
        #expect(status.state == .subscribed)
        #expect(try status.transaction.verifiedValue().id != first.id)
    }

    @Test("turning auto-renew off expires the subscription at period end with reason autoRenewDisabled")
    func cancellation() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        let first = try await phone.purchase(productID: Shop.premiumYearly).verifiedTransaction()
        try await session.disableAutoRenewForTransaction(identifier: first.id)
        var status = try #require(try await phone.subscriptionStatuses(groupID: Shop.plus).first)
        #expect(try status.renewalInfo.verifiedValue().willAutoRenew == false)
        try await session.advance(to: try #require(first.expirationDate).addingTimeInterval(1))
        status = try #require(try await phone.subscriptionStatuses(groupID: Shop.plus).first)
        #expect(status.state == .expired)
        #expect(try status.renewalInfo.verifiedValue().expirationReason == .autoRenewDisabled)
    }

    @Test("a refund revokes the subscription: status revoked, no entitlement")
    func refundRevokes() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        let first = try await phone.purchase(productID: Shop.premiumMonthly).verifiedTransaction()
        await first.finish()
        try await session.refundTransaction(identifier: first.id)
        let revoked = try await firstElement(of: phone.transactionUpdates).verifiedValue()
        #expect(revoked.revocationDate != nil)
        let status = try #require(try await phone.subscriptionStatuses(groupID: Shop.plus).first)
        #expect(status.state == .revoked)
        #expect(try await collect(phone.currentEntitlements).isEmpty)
    }

    @Test("statuses fail as the session says")
    func simulatedStatusFailure() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        try await session.setSimulatedError(.generic(.networkError), forAPI: .subscriptionStatus)
        await #expect(throws: StoreKitError.self) { _ = try await phone.subscriptionStatuses(groupID: Shop.plus) }
    }
}
