import AppStoreModels
import AppStoreServerAPI
import AppStoreSigning
import AppStoreSimulator
import Foundation
import StoreService
import Testing
import TestSupport

/// The Swift `AppStoreServerAPIClient`, with its base URL overridden, against `storekit serve`.
@Suite(.timeLimit(.minutes(10)))
struct SwiftServerAPIClientTests {
    static func client(_ api: ServedServerAPI) throws -> AppStoreServerAPIClient {
        try AppStoreServerAPIClient(signingKey: try api.key.pemRepresentation, keyId: api.record.keyId, issuerId: api.record.issuerId,
                                    bundleId: ServedServerAPI.bundleID, environment: .sandbox, baseURL: api.server.url)
    }

    @Test("the Swift client pages through history, reads statuses and orders, extends, and gets Apple's error codes")
    func calls() async throws {
        try await ServedServerAPI.with { api in
            var gems: [UInt64] = []
            for _ in 0..<23 {
                guard case .success(let signed) = try await api.store.purchase(PurchaseRequest(productID: ExampleShop.gems, account: "alice", device: "phone")) else {
                    throw TestFailure("expected a purchase")
                }
                gems.append(signed.transaction.id)
            }
            guard case .success(let monthly) = try await api.store.purchase(PurchaseRequest(productID: ExampleShop.premiumMonthly, account: "alice", device: "phone")) else {
                throw TestFailure("expected a subscription")
            }
            try await api.store.refundTransaction(gems[3])
            let client = try Self.client(api)
            var options = SignedDataVerifier.Options()
            options.verifiesLocalEnvironments = true
            let verifier = try SignedDataVerifier(rootCertificates: [api.store.rootCertificate], bundleId: ServedServerAPI.bundleID,
                                                  environment: .sandbox, options: options)

            var revision: String?
            var seen: [String] = []
            var pages = 0
            repeat {
                let page = try await client.getTransactionHistory(String(gems[0]), revision: revision, request: TransactionHistoryRequest(sort: .descending))
                pages += 1
                seen += try (page.signedTransactions ?? []).map { try verifier.verifyAndDecodeTransaction($0).transactionId ?? "" }
                revision = page.hasMore == true ? page.revision : nil
            } while revision != nil
            #expect(pages == 2)
            #expect(seen.count == 24)
            #expect(seen.first == String(monthly.transaction.id))
            #expect(Set(seen).count == 24)

            let statuses = try await client.getAllSubscriptionStatuses(String(gems[0]), status: [1])
            #expect(statuses.data?.first?.lastTransactions?.first?.originalTransactionId == String(monthly.transaction.id))
            #expect(try await client.getRefundHistory(String(gems[0]), revision: nil).signedTransactions?.count == 1)
            let order = try await client.lookUpOrderId(monthly.transaction.orderID)
            #expect(order.status == 0)
            #expect(try order.signedTransactions.map { try $0.map { try verifier.verifyAndDecodeTransaction($0).productId } } == [ExampleShop.premiumMonthly])
            let extended = try await client.extendSubscriptionRenewalDate(
                originalTransactionId: String(monthly.transaction.id),
                ExtendRenewalDateRequest(extendByDays: 10, extendReasonCode: 1, requestIdentifier: "first"))
            #expect(extended.success == true)
            #expect(extended.effectiveDate == AppStoreJSON.milliseconds(from: monthly.transaction.expirationDate!.addingTimeInterval(10 * 86_400)))
            _ = try await client.extendSubscriptionRenewalDate(originalTransactionId: String(monthly.transaction.id),
                                                               ExtendRenewalDateRequest(extendByDays: 1, extendReasonCode: 1, requestIdentifier: "second"))
            await #expect(throws: AppStoreServerAPIError(httpStatusCode: 403, apiErrorCode: 4_030_005, errorMessage: "The subscription has reached the maximum number of renewal date extensions.")) {
                _ = try await client.extendSubscriptionRenewalDate(originalTransactionId: String(monthly.transaction.id),
                                                                   ExtendRenewalDateRequest(extendByDays: 1, extendReasonCode: 1, requestIdentifier: "third"))
            }
            try await client.sendConsumptionInformation(String(gems[1]), ConsumptionRequest(customerConsented: true, sampleContentProvided: false,
                                                                                          deliveryStatus: "DELIVERED"))
            let token = UUID()
            try await client.setAppAccountToken(originalTransactionId: String(monthly.transaction.id), appAccountToken: token)
            #expect(try await api.store.ledgerTransaction(monthly.transaction.id)?.appAccountToken == token)
            try await client.finishTransaction(String(gems[5]))
            #expect(try await api.store.ledgerTransaction(gems[5])?.isFinished == true)
            let app = try await client.getAppTransactionInfo(String(gems[0]))
            #expect(try await verifier.verifyAndDecodeAppTransaction(app.signedAppTransactionInfo ?? "").bundleId == ServedServerAPI.bundleID)
            let test = try await client.requestTestNotification()
            let status = try await client.getTestNotificationStatus(test.testNotificationToken ?? "")
            #expect(try await verifier.verifyAndDecodeNotification(status.signedPayload ?? "").notificationType == .test)
            await #expect(throws: AppStoreServerAPIError(httpStatusCode: 404, apiErrorCode: 4_040_010, errorMessage: "Transaction id not found.")) {
                _ = try await client.getTransactionInfo("31337")
            }
            await #expect(throws: AppStoreServerAPIError(httpStatusCode: 400, apiErrorCode: 4_000_006, errorMessage: "Invalid transaction id.")) {
                _ = try await client.getTransactionInfo("thirty")
            }
        }
    }

    @Test("a client whose key was revoked gets 401")
    func revokedKey() async throws {
        try await ServedServerAPI.with { api in
            let client = try Self.client(api)
            _ = try await client.requestTestNotification()
            try await api.store.revokeAPIKey(api.record.keyId)
            await #expect(throws: AppStoreServerAPIError(httpStatusCode: 401, apiErrorCode: nil, errorMessage: nil)) {
                _ = try await client.requestTestNotification()
            }
        }
    }
}
