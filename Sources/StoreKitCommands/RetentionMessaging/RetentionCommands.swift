import AppStoreModels
import AppStoreSimulator
import Foundation

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
