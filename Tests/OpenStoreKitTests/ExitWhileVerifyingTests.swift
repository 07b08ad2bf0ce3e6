import Foundation
import Testing
import TestSupport

/// The program, built beside the tests.
let exitWhileVerifyingProgram = SharedTestData.packageRoot.appendingPathComponent(".build/debug/ExitWhileVerifying")

/// Every app's `Transaction.updates` listener runs until the app exits, so apps exit while they
/// verify. OpenSSL's exit-time cleanup once ran under such a verification and crashed the app (69
/// of 100 runs of this program); OpenStoreKit now initialises OpenSSL without it.
@Suite(.timeLimit(.minutes(10)), .enabled(if: FileManager.default.isExecutableFile(atPath: exitWhileVerifyingProgram.path),
                "the ExitWhileVerifying program is not built; run swift build first"))
struct ExitWhileVerifyingTests {
    static let program = exitWhileVerifyingProgram

    @Test("an app that exits while its listeners verify never crashes: 200 runs, half with Foundation's HTTP client started first")
    func exitsWhileVerifying() async throws {
        let runs = 200
        let lanes = 4
        let crashes = try await withThrowingTaskGroup(of: [String].self) { group in
            for lane in 0..<lanes {
                group.addTask {
                    var crashes: [String] = []
                    for run in stride(from: lane, to: runs, by: lanes) {
                        // Exits 1 to 8 ms after its listeners start; odd runs start libcurl (which also
                        // initialises OpenSSL) before anything is verified.
                        var arguments = [ExampleShop.file.path, String(run % 8 + 1)]
                        if run % 2 == 1 { arguments.append("--network-first") }
                        // A crash ends at once, without Swift's backtracer (which takes seconds per crash).
                        let child = try Subprocess(Self.program, arguments, environment: ["SWIFT_BACKTRACE": "enable=no"])
                        let ended = await child.termination()
                        if ended.exitCode != 0 { crashes.append("run \(run) (\(arguments.dropFirst().joined(separator: " "))): \(ended)") }
                    }
                    return crashes
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(crashes.isEmpty, "\(crashes.count) of \(runs) runs crashed: \(crashes.prefix(5))")
    }
}
