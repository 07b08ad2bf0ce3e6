import Foundation
import Testing
import TestSupport

/// The program, built beside the tests.
let mainThreadProgram = SharedTestData.packageRoot.appendingPathComponent(".build/debug/MainThreadApp")

/// On Linux an async main gives the main thread to Dispatch, and main-actor code runs elsewhere after
/// its first suspension, where `OperationQueue.current` is nil. `MainThread.run` keeps it on the main
/// thread, as XCTest does for its tests.
@Suite(.timeLimit(.minutes(10)), .enabled(if: FileManager.default.isExecutableFile(atPath: mainThreadProgram.path),
                "the MainThreadApp program is not built; run swift build first"))
struct MainThreadTests {
    func run(_ arguments: [String]) async throws -> String {
        let child = try Subprocess(mainThreadProgram, [ExampleShop.file.path] + arguments, output: .pipe)
        let output = String(decoding: await child.readToEnd(), as: UTF8.self)
        let ended = await child.termination()
        #expect(ended.exitCode == 0, "\(ended)")
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("through MainThread.run, main-actor store code stays on the main thread after it awaits the store, with the main queue current")
    func keepsTheMainThread() async throws {
        #expect(try await run([]) == "main thread: true, current queue: main")
    }

    @Test("from an async main the same code runs off the main thread with no current queue: the trait MainThread.run avoids")
    func asyncMainLosesIt() async throws {
        #expect(try await run(["--async-main"]) == "main thread: false, current queue: none")
    }
}
