import AppStoreModels
import AppStoreSimulator
import Foundation
import Testing
import TestSupport

/// The customer's side of the retention flow on the command line, and the review control.
@Suite struct RetentionCommandTests {
    @Test("cancel-subscription shows the default message and cancels; retention review approves; bad answers are refused, naming them")
    func cancelFromTheCommandLine() async throws {
        let scratch = Scratch()
        let directory = try await StoreCommandTests.makeStore(scratch, environment: "Xcode")
        #expect(await CommandRun.run(["purchase", directory, ExampleShop.premiumMonthly, "--account", "alice", "--device", "phone"]).status == 0)
        let store = try await TestStores.open(URL(fileURLWithPath: directory))
        let original = try #require(try await store.ledgerTransactions(account: "alice").first?.id)
        let message = UUID().uuidString.lowercased()
        try await store.uploadRetentionMessage(message, UploadMessageRequestBody(header: "Before you go", body: "Your plans stay in sync."))

        let review = await CommandRun.run(["retention", "review", directory, message])
        #expect(review.status == 0 && review.standardOutput.contains("APPROVED"), "\(review.standardError)")
        let listed = await CommandRun.run(["retention", "list", directory])
        #expect(listed.standardOutput.contains("message  \(message)  APPROVED  \"Before you go\""), "\(listed.standardOutput)")
        try await store.configureDefaultRetentionMessage(productID: ExampleShop.premiumMonthly, locale: "en-US", messageIdentifier: message)

        let refused = await CommandRun.run(["cancel-subscription", directory, String(original), "--answer", "maybe"])
        #expect(refused.status != 0 && refused.standardError.contains("--answer takes kept, switched, redeemed, cancelled, not 'maybe'"))
        let shown = await CommandRun.run(["cancel-subscription", directory, String(original)])
        #expect(shown.status == 0 && shown.standardOutput.contains("defaultMessage") && shown.standardOutput.contains("Before you go"), "\(shown.standardOutput)\(shown.standardError)")
        #expect(shown.standardOutput.contains("answers: kept, cancelled"))
        let cancelled = await CommandRun.run(["cancel-subscription", directory, String(original), "--answer", "cancelled"])
        #expect(cancelled.status == 0 && cancelled.standardOutput.contains("answered: cancelled"), "\(cancelled.standardError)")
        let reopened = try await TestStores.open(URL(fileURLWithPath: directory))
        #expect(try await reopened.subscriptionRecord(originalTransactionID: original)?.autoRenewEnabled == false)
        #expect(try await reopened.cancellationAttempts(originalTransactionID: original).map(\.outcome) == [nil, .cancelled])
        let again = await CommandRun.run(["cancel-subscription", directory, String(original)])
        #expect(again.status != 0 && again.standardError.contains("nothing to cancel"), "\(again.standardError)")
    }
}

/// The backend's retention rules on the command line.
@Suite struct BackendRetentionRuleCommandTests {
    @Test("backend retention-rule add, list and remove; bad rules are refused, naming what is wrong")
    func rules() async throws {
        let scratch = Scratch()
        let database = "sqlite:" + scratch.path("backend.sqlite")
        let message = UUID().uuidString.lowercased()
        let refusedMessage = await CommandRun.run(["backend", "retention-rule", "add", "--database", database, "--message", "hello"])
        #expect(refusedMessage.status != 0 && refusedMessage.standardError.contains("--message must be a message's UUID"), "\(refusedMessage.standardError)")
        let refusedDays = await CommandRun.run(["backend", "retention-rule", "add", "--database", database, "--message", message, "--min-days", "40", "--max-days", "30"])
        #expect(refusedDays.status != 0 && refusedDays.standardError.contains("--min-days (40) is more than --max-days (30)"))
        let refusedTrial = await CommandRun.run(["backend", "retention-rule", "add", "--database", database, "--message", message, "--trial", "maybe"])
        #expect(refusedTrial.status != 0 && refusedTrial.standardError.contains("--trial must be yes or no"))
        let refusedBoth = await CommandRun.run(["backend", "retention-rule", "add", "--database", database, "--message", message,
                                                "--switch-to", ExampleShop.standardMonthly, "--offer", "premium.monthly.firstmonth"])
        #expect(refusedBoth.status != 0 && refusedBoth.standardError.contains("not both"), "\(refusedBoth.standardError)")

        let added = await CommandRun.run(["backend", "retention-rule", "add", "--database", database, "--message", message,
                                          "--product", ExampleShop.premiumMonthly, "--min-days", "31", "--trial", "no", "--switch-to", ExampleShop.standardMonthly])
        #expect(added.status == 0 && added.standardOutput.contains("at position 1"), "\(added.standardError)")
        let second = await CommandRun.run(["backend", "retention-rule", "add", "--database", database, "--message", message])
        #expect(second.standardOutput.contains("at position 2"))
        let listed = await CommandRun.run(["backend", "retention-rule", "list", "--database", database])
        #expect(listed.standardOutput.contains("product \(ExampleShop.premiumMonthly), ≥ 31 days, not in a free trial → message \(message), switch to \(ExampleShop.standardMonthly)"),
                "\(listed.standardOutput)")
        #expect(listed.standardOutput.contains("everyone → message \(message)"))
        let offer = await CommandRun.run(["backend", "retention-rule", "add", "--database", database, "--message", message, "--offer", "premium.monthly.firstmonth"])
        #expect(offer.status == 0, "\(offer.standardError)")
        #expect(await CommandRun.run(["backend", "retention-rule", "list", "--database", database]).standardOutput
                    .contains("everyone → message \(message), offer premium.monthly.firstmonth"))
        let id = try #require(added.standardOutput.split(separator: " ").dropFirst(2).first.map(String.init))
        #expect(await CommandRun.run(["backend", "retention-rule", "remove", "--database", database, id]).status == 0)
        let missing = await CommandRun.run(["backend", "retention-rule", "remove", "--database", database, id])
        #expect(missing.status != 0 && missing.standardError.contains("no retention rule \(id)"))
    }
}
