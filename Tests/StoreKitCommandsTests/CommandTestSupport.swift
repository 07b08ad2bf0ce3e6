import Foundation
import StoreKitCommands

/// Runs the `storekit` command tree in-process and keeps what it printed.
struct CommandRun {
    let status: Int32
    let standardOutput: String
    let standardOutputData: Data
    let standardError: String

    static func run(_ arguments: [String], input: Data = Data()) async -> CommandRun {
        let recording = RecordingConsole(input: input)
        let status = await StoreKitCommand.main(arguments, console: recording.console)
        return CommandRun(status: status, standardOutput: recording.standardOutput,
                          standardOutputData: recording.standardOutputData, standardError: recording.standardError)
    }

    /// The standard output parsed as a JSON object.
    var jsonObject: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: standardOutputData)) as? [String: Any]
    }
}

/// A scratch directory removed when the test ends.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("storekit-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    func write(_ text: String, to name: String) throws -> String {
        try Data(text.utf8).write(to: url.appendingPathComponent(name))
        return path(name)
    }

    func write(_ data: Data, to name: String) throws -> String {
        try data.write(to: url.appendingPathComponent(name))
        return path(name)
    }
}
