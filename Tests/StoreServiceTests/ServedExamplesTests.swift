import Foundation
import Synchronization
import Testing
import TestSupport

/// The example apps run their whole sessions against `storekit serve` with `--store URL`.
@Suite(.serialized, .enabled(if: Built.available && FileManager.default.isExecutableFile(atPath: Built.tool("SubscriptionPlans").path),
                             "the storekit and example binaries are not built; run swift build first"))
struct ServedExamplesTests {
    /// A process whose standard output is collected as it comes.
    final class Running: Sendable {
        let process: Subprocess
        private let output = OutputBuffer()

        /// What a process printed so far.
        final class OutputBuffer: Sendable {
            private let data = Mutex(Data())
            func append(_ chunk: Data) { data.withLock { $0.append(chunk) } }
            var text: String { data.withLock { String(decoding: $0, as: UTF8.self) } }
        }

        init(_ executable: URL, _ arguments: [String]) throws {
            process = try Subprocess(executable, arguments, output: .pipe, error: .sameAsOutput)
            let (process, output) = (self.process, self.output)
            Thread.detachNewThread {
                while let line = process.readLine() { output.append(Data((line + "\n").utf8)) }
            }
        }

        var text: String { output.text }

        /// Waits until a line matching `predicate` is printed, and returns it.
        func line(where predicate: (Substring) -> Bool, within seconds: Double = 60) async throws -> Substring {
            let deadline = ContinuousClock.now + .seconds(seconds)
            while ContinuousClock.now < deadline {
                if let line = text.split(separator: "\n").first(where: predicate) { return line }
                guard process.isRunning else { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            throw TestFailure("no such line; the process printed:\n\(text)")
        }

        func wait() async -> Int32 {
            _ = await process.waitAsync()
            return process.exitCode
        }
    }

    @Test("subscription plans over HTTP: buys, renews after an admin advance, a second device restores, a CLI refund arrives on its updates")
    func subscriptionPlans() async throws {
        let scratch = Scratch()
        let directory = try makeStoreDirectory(in: scratch)
        let server = try ServeProcess(directory: directory)
        defer { server.stop() }
        let app = try Running(Built.tool("SubscriptionPlans"), ["--store", server.url.absoluteString, "--wait-for-refund"])
        defer { if app.process.isRunning { app.process.signal(SIGTERM) } }
        let waiting = try await app.line { $0.contains("Waiting for a refund of #") }
        let id = try #require(waiting.split(separator: "#").last?.split(separator: " ").first.map(String.init))
        #expect(try await ChildProcess.run(Built.storekit, ["refund", directory.path, id]).status == 0)
        #expect(await app.wait() == 0, "\(app.text)")
        let text = app.text
        #expect(text.contains("A month later → 1 renewal arrived through Transaction.updates"))
        #expect(text.contains("Restore Purchases (AppStore.sync) → pro: true"))
        #expect(text.contains("Refund arrived through Transaction.updates: #\(id)"))
    }

    @Test("every example runs its whole session against a served store", arguments: [
        ("PotionShop", "Shop.storekit", "com.example.shop", "Done: 4 potions"),
        ("GemStore", "Shop.storekit", "com.example.shop", "Done: 80 gems"),
        ("LegacyShop", "Shop.storekit", "com.example.shop", "Restore Purchases → purchased"),
        ("Recipes", "Recipes/Recipes.storekit", "com.example.recipes", "Why pro?"),
        ("Productivity", "Productivity/Productivity.storekit", "com.example.productivity", "•"),
    ])
    func example(name: String, file: String, bundleID: String, expected: String) async throws {
        let scratch = Scratch()
        let directory = try makeStoreDirectory(in: scratch, file: SharedTestData.packageRoot.appendingPathComponent("Examples/\(file)"), bundleID: bundleID)
        let server = try ServeProcess(directory: directory)
        defer { server.stop() }
        let app = try Running(Built.tool(name), ["--store", server.url.absoluteString])
        #expect(await app.wait() == 0, "\(app.text)")
        #expect(app.text.contains(expected), "\(app.text)")
    }
}
