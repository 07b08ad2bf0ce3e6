import AppStoreSimulator
import Foundation

/// `storekit advance`: moves a manual clock, playing every renewal and expiry that falls due.
struct AdvanceCommand: Command {
    static let declaration = CommandDeclaration("advance", group: .subscriptions, abstract: "Move the store's manual clock forward, playing every lifecycle event due on the way.", arguments: [
        .positional("DIR", "the store's folder"),
        .positional("DURATION", "how far: ISO 8601 such as P1M, P3D, PT12H, or 3d, 2w, 1M, 1y, 12h, 30m, 45s"),
    ])

    var directory: String
    var step: TimeStep

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        directory = try arguments.positional("DIR")
        let text = try arguments.positional("DURATION")
        guard let step = TimeStep(text) else { throw ValidationError("DURATION must be like P1M, PT12H, 3d or 1M, not \"\(text)\"") }
        self.step = step
    }

    func run(console: Console) async throws {
        let store = try await StoreAccess.open(directory)
        // The step is taken from the clock as the ledger has it once this process may move it, so
        // two advances at once add up.
        let step = self.step
        let played = try await store.advanceTime { step.date(after: $0) }
        console.print("now \(StoreAccess.iso(try await store.currentTime())); \(played) event\(played == 1 ? "" : "s") played")
    }
}

/// `storekit now`: the store's current time.
struct NowCommand: Command {
    static let declaration = CommandDeclaration("now", group: .subscriptions, abstract: "Print the store's current time.", arguments: [
        .positional("DIR", "the store's folder"),
    ])

    var directory: String

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        directory = try arguments.positional("DIR")
    }

    func run(console: Console) async throws {
        console.print(StoreAccess.iso(try await StoreAccess.open(directory).now))
    }
}
