import Foundation
import TestSupport

/// Runs the built `storekit` executable as a separate process, as a user's shell would.
struct StoreProcess: Sendable {
    let arguments: [String]
    let status: Int32
    let standardOutput: String
    let standardError: String

    /// The lines of standard output.
    var lines: [String] { standardOutput.split(separator: "\n").map(String.init) }

    /// Runs `storekit ARGUMENTS` and waits for it to end.
    static func run(_ arguments: [String]) async throws -> StoreProcess {
        let result = try await ChildProcess.run(BuiltTool.storekit, arguments)
        return StoreProcess(arguments: arguments, status: result.status, standardOutput: result.standardOutput, standardError: result.standardError)
    }

    /// Starts every command at once and waits for all of them.
    static func parallel(_ commands: [[String]]) async throws -> [StoreProcess] {
        try await withThrowingTaskGroup(of: (Int, StoreProcess).self) { group in
            for (index, arguments) in commands.enumerated() {
                group.addTask { (index, try await run(arguments)) }
            }
            var results: [(Int, StoreProcess)] = []
            for try await result in group { results.append(result) }
            return results.sorted { $0.0 < $1.0 }.map(\.1)
        }
    }

    /// Runs commands one after another in this task (a loop a user would write in a shell).
    static func sequence(_ commands: [[String]]) async throws -> [StoreProcess] {
        var results: [StoreProcess] = []
        for arguments in commands { results.append(try await run(arguments)) }
        return results
    }

    var failureDescription: String { "storekit \(arguments.joined(separator: " ")) exited \(status): \(standardError)" }
}
