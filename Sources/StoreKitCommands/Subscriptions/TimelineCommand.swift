import Foundation
import StoreService

/// `storekit timeline`: a subscription's life as an SVG picture.
struct TimelineCommand: Command {
    static let declaration = CommandDeclaration("timeline", group: .subscriptions, abstract: "Draw a subscription's periods, offers, plan changes, billing problems, refunds and expiries as an SVG.", arguments: [
        .positional("DIR", "the store's folder"),
        .positional("TRANSACTION_ID", "a transaction of the subscription"),
        .option("--svg", "FILE", "where to write the drawing", required: true),
    ])

    var directory: String
    var transactionID: UInt64
    var output: String

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        guard let output = try arguments.value("--svg") else { throw ValidationError("name the SVG file to write with --svg FILE") }
        self.output = output
        directory = try arguments.positional("DIR")
        transactionID = try StoreAccess.transactionID(try arguments.positional("TRANSACTION_ID"))
    }

    func run(console: Console) async throws {
        let store = try await StoreAccess.open(directory)
        let timeline = try await SubscriptionTimeline.load(store: store, originalTransactionID: transactionID)
        let url = URL(fileURLWithPath: output)
        do {
            try Data(timeline.svg.utf8).write(to: url, options: .atomic)
        } catch {
            throw CommandFailure("cannot write \(output): \(error.localizedDescription)")
        }
        console.print("wrote the timeline of subscription \(timeline.originalTransactionID) (\(timeline.periods.count) periods, \(timeline.events.count) events) to \(output)")
    }
}
