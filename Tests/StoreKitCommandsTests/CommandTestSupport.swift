import Foundation
import StoreKitBenchmarks
import StoreKitCommands

/// Runs the `storekit` command tree in-process and keeps what it printed.
struct CommandRun {
    let status: Int32
    let standardOutput: String
    let standardOutputData: Data
    let standardError: String

    static func run(_ arguments: [String], input: Data = Data()) async -> CommandRun {
        let recording = RecordingConsole(input: input)
        let status = await StoreKitCommand.main(arguments, console: recording.console, commands: StoreKitCommand.commands + Benchmarks.commands)
        return CommandRun(status: status, standardOutput: recording.standardOutput,
                          standardOutputData: recording.standardOutputData, standardError: recording.standardError)
    }

    /// The standard output parsed as a JSON object.
    var jsonObject: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: standardOutputData)) as? [String: Any]
    }
}

/// A scratch directory removed when the test ends.
