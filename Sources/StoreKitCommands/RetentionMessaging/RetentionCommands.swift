import StoreService
import AppStoreModels
import AppStoreSimulator
import Foundation
import SimulatorConnection

/// `storekit retention review`: approves or rejects an uploaded image or message, as App Store
/// review would (uploads to a Sandbox store are approved at once, as in Apple's sandbox).
struct RetentionReviewCommand: Command {
    static let declaration = CommandDeclaration("retention review", group: .server, abstract: "Approve or reject an uploaded retention image or message, as App Store review would.", arguments: [
        .positional("DIR", "the store's folder"),
        .positional("ID", "the image's or message's identifier"),
        .flag("--approve", "approve it (the default)"),
        .flag("--reject", "reject it: it is never shown"),
    ])

    var directory: String
    var identifier: String
    var state: RetentionContentState

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        directory = try arguments.positional("DIR")
        identifier = try arguments.positional("ID")
        let approve = arguments.flag("--approve")
        let reject = arguments.flag("--reject")
        guard !(approve && reject) else { throw ValidationError("give --approve or --reject, not both") }
        state = reject ? .rejected : .approved
    }

    func run(console: Console) async throws {
        try await StoreAccess.open(directory).reviewRetentionContent(identifier, state: state)
        console.print("\(identifier.lowercased()) \(state.rawValue)")
    }
}

/// `storekit retention list`: what the developer configured through the Retention Messaging API.
struct RetentionListCommand: Command {
    static let declaration = CommandDeclaration("retention list", group: .server, abstract: "List the store's retention images and messages with their review states, and the real-time URL.", arguments: [
        .positional("DIR", "the store's folder"),
    ])

    var directory: String

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        directory = try arguments.positional("DIR")
    }

    func run(console: Console) async throws {
        let store = try await StoreAccess.open(directory)
        let images = try await store.retentionImages().imageIdentifiers ?? []
        let messages = try await store.retentionMessages().messageIdentifiers ?? []
        var lines = images.map { "image    \($0.imageIdentifier ?? "")  \($0.imageState?.rawValue ?? "")  \($0.imageSize?.rawValue ?? "")" }
        for message in messages {
            let content = try await store.retentionMessage(message.messageIdentifier ?? "")?.content
            lines.append("message  \(message.messageIdentifier ?? "")  \(message.messageState?.rawValue ?? "")  \(content.map { "\"\($0.header)\"" } ?? "")")
        }
        lines.append("real-time URL: \(try await store.retentionRealtimeURL() ?? "none")")
        console.print(lines.joined(separator: "\n"))
    }
}

/// `storekit cancel-subscription`: the customer opens a subscription's cancellation page (the
/// developer's real-time URL asked, or the default message shown) and, with `--answer`, answers it.
struct CancelSubscriptionCommand: Command {
    static let declaration = CommandDeclaration("cancel-subscription", group: .subscriptions, abstract: "Cancel a subscription as its customer would: the retention message shown, then keep, switch, redeem or cancel.", arguments: [
        .positional("DIR", "the store's folder"),
        .positional("TRANSACTION_ID", "any transaction of the subscription"),
        .option("--locale", "LOCALE", "the customer's locale (en-US)"),
        .option("--answer", "ANSWER", "kept, switched, redeemed or cancelled; without it the page is only shown"),
    ])

    var directory: String
    var transactionID: UInt64
    var locale: String
    var answer: RetentionOfferAttempt.Outcome?

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        directory = try arguments.positional("DIR")
        let id = try arguments.positional("TRANSACTION_ID")
        guard let number = UInt64(id) else { throw ValidationError("TRANSACTION_ID must be a transaction identifier, not '\(id)'") }
        transactionID = number
        locale = try arguments.value("--locale") ?? "en-US"
        if let text = try arguments.value("--answer") {
            guard let outcome = RetentionOfferAttempt.Outcome(rawValue: text) else {
                throw ValidationError("--answer takes \(RetentionOfferAttempt.Outcome.allCases.map(\.rawValue).joined(separator: ", ")), not '\(text)'")
            }
            answer = outcome
        }
    }

    func run(console: Console) async throws {
        let store = try await StoreAccess.open(directory)
        let flow = CancellationFlow(store: store)
        var attempt = try await flow.start(originalTransactionID: transactionID, locale: locale)
        let message = if let identifier = attempt.messageIdentifier { try await store.retentionMessage(identifier)?.content } else { UploadMessageRequestBody?.none }
        var lines = ["attempt \(attempt.id): \(attempt.source.rawValue)\(attempt.realtimeFailure.map { " (the real-time answer was not used: \($0))" } ?? "")"]
        if let message { lines.append("  \(message.header)\n  \(message.body)") }
        for bullet in message?.bulletPoints ?? [] { lines.append("  • \(bullet.text)") }
        if let plan = attempt.alternateProductID { lines.append("  switch to \(plan)") }
        if let offer = attempt.offerIdentifier { lines.append("  offer \(offer)") }
        lines.append("answers: \(attempt.answers.map(\.rawValue).joined(separator: ", "))")
        if let answer {
            attempt = try await flow.answer(attempt.id, outcome: answer)
            lines.append("answered: \(attempt.outcome?.rawValue ?? "")")
        }
        console.print(lines.joined(separator: "\n"))
    }
}
