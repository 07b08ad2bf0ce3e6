import Foundation
import Synchronization
import Testing
import TestSupport

/// The example apps run their whole sessions against `storekit serve` with `--store URL`.
@Suite(.timeLimit(.minutes(10)), .serialized, .enabled(if: Built.available && FileManager.default.isExecutableFile(atPath: Built.tool("SubscriptionPlans").path),
                             "the storekit and example binaries are not built; run swift build first"))
struct ServedExamplesTests {
    /// A process whose standard output is collected as it comes.
    final class Running: Sendable {
        let process: Subprocess
        private let output = OutputBuffer()

        /// What a process printed so far; tasks waiting for a line are woken as each line arrives.
        final class OutputBuffer: Sendable {
            private let state = Mutex<(lines: [String], ended: Bool, waiters: [UInt64: CheckedContinuation<Void, Never>], next: UInt64)>(([], false, [:], 0))

            func append(_ line: String?) {
                let waiters = state.withLock { state in
                    if let line { state.lines.append(line) } else { state.ended = true }
                    defer { state.waiters = [:] }
                    return Array(state.waiters.values)
                }
                for waiter in waiters { waiter.resume() }
            }

            var text: String { state.withLock { $0.lines.map { $0 + "\n" }.joined() } }

            /// The first line matching `predicate`, waiting for it; `nil` once the output ended without
            /// one, or the task is cancelled.
            func line(where predicate: (String) -> Bool) async -> String? {
                while !Task.isCancelled {
                    let (found, ended, id) = state.withLock { state in
                        defer { state.next += 1 }
                        return (state.lines.first(where: predicate), state.ended, state.next)
                    }
                    if let found { return found }
                    if ended { return nil }
                    await withTaskCancellationHandler {
                        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                            let resumeNow = state.withLock { state -> Bool in
                                // A line that arrived since the look above, or a cancellation, wakes at once.
                                if state.ended || state.lines.contains(where: predicate) || Task.isCancelled { return true }
                                state.waiters[id] = continuation
                                return false
                            }
                            if resumeNow { continuation.resume() }
                        }
                    } onCancel: {
                        state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
                    }
                }
                return nil
            }
        }

        init(_ executable: URL, _ arguments: [String]) throws {
            process = try Subprocess(executable, arguments, output: .pipe, error: .sameAsOutput)
            let (process, output) = (self.process, self.output)
            Task {
                while let line = await process.readLine() { output.append(line) }
                output.append(nil)
            }
        }

        var text: String { output.text }

        /// Waits until a line matching `predicate` is printed, and returns it; fails if the process ends
        /// without printing one, or after `limit` (a deadline for a broken test, not a timing).
        func line(within limit: Duration = .seconds(180), where predicate: @escaping @Sendable (String) -> Bool) async throws -> String {
            let output = self.output
            let found = try await withThrowingTaskGroup(of: String?.self) { group in
                group.addTask { await output.line(where: predicate) }
                group.addTask {
                    try await Task.sleep(for: limit)
                    return nil
                }
                defer { group.cancelAll() }
                return try await group.next() ?? nil
            }
            guard let found else { throw TestFailure("no such line; the process printed:\n\(text)") }
            return found
        }

        /// Waits for the process to end and for everything it printed to be read; returns its exit code.
        func exitCode() async -> Int32 {
            let code = await process.termination().exitCode
            _ = await output.line { _ in false }
            return code
        }
    }

    @Test("subscription plans over HTTP: buys, renews after an admin advance, a second device restores, a CLI refund arrives on its updates; a store in a folder and in PostgreSQL",
          arguments: TestStores.Engine.allCases)
    func subscriptionPlans(engine: TestStores.Engine) async throws {
        try await TestStores.withStore(engine, in: Scratch()) { store in try await Self.subscriptionPlans(store: store) }
    }

    static func subscriptionPlans(store directory: String) async throws {
        try await ServeProcess.serving(store: directory) { server in
            let app = try Running(Built.tool("SubscriptionPlans"), ["--store", server.url.absoluteString, "--wait-for-refund"])
            defer { if app.process.isRunning { app.process.signal(SIGTERM) } }
            let waiting = try await app.line { $0.contains("Waiting for a refund of #") }
            let id = try #require(waiting.split(separator: "#").last?.split(separator: " ").first.map(String.init))
            #expect(try await ChildProcess.run(Built.storekit, ["refund", directory, id]).status == 0)
            #expect(await app.exitCode() == 0, "\(app.text)")
            let text = app.text
            #expect(text.contains("A month later → 1 renewal arrived through Transaction.updates"))
            #expect(text.contains("Restore Purchases (AppStore.sync) → pro: true"))
            #expect(text.contains("Refund arrived through Transaction.updates: #\(id)"))
            #expect(text.contains("Running as com.example.shop"), "Bundle.main.bundleIdentifier is the store's")
            // The app's Logger line reaches standard error in the unified log's format; its bundle is the store's.
            let logged = try #require(text.split(separator: "\n").first { $0.contains("[com.example.shop:Plans] subscribed to") }, "\(text)")
            #expect(logged.wholeMatch(of: #/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}[+-]\d{4} 0x[0-9a-f]+ +Default +0x0 +\d+ +0 +SubscriptionPlans: \[com\.example\.shop:Plans\] subscribed to com\.example\.shop\.plus\.premium\.(monthly|yearly): transaction \d+/#) != nil,
                    "\(logged)")
        }
    }

    static let examples = [
        ("PotionShop", "Shop.storekit", "com.example.shop", "Done: 4 potions"),
        ("GemStore", "Shop.storekit", "com.example.shop", "Done: 80 gems"),
        ("LegacyShop", "Shop.storekit", "com.example.shop", "Restore Purchases → purchased"),
        ("Recipes", "Recipes/Recipes.storekit", "com.example.recipes", "Why pro?"),
        ("Productivity", "Productivity/Productivity.storekit", "com.example.productivity", "•"),
    ]

    @Test("every example runs its whole session against a served store, in a folder and in PostgreSQL",
          arguments: examples.indices, TestStores.Engine.allCases)
    func example(index: Int, engine: TestStores.Engine) async throws {
        let (name, file, bundleID, expected) = Self.examples[index]
        let configuration = SharedTestData.packageRoot.appendingPathComponent("Examples/\(file)")
        try await TestStores.withStore(engine, in: Scratch(), file: configuration, bundleID: bundleID) { store in
            try await ServeProcess.serving(store: store) { server in
                let app = try Running(Built.tool(name), ["--store", server.url.absoluteString])
                #expect(await app.exitCode() == 0, "\(name): \(app.text)")
                #expect(app.text.contains(expected), "\(name): \(app.text)")
            }
        }
    }
}
