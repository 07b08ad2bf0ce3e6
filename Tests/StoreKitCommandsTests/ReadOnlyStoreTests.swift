import Foundation
import Testing
import TestSupport

/// A store on a read-only filesystem (a read-only volume, a shipped fixture, a CI cache) can still be
/// read by every reading command; a command that would change it says plainly that it is read-only
/// and changes nothing.
@Suite(.timeLimit(.minutes(10)))
struct ReadOnlyStoreTests {
    /// Whether this user can bind-mount: root with `mount` at hand (CI and this machine run as root).
    static let canMount = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/mount")

    /// Makes a read-only view of `source` at `target` with a read-only bind mount.
    static func readOnlyMount(_ source: String, at target: String) async throws {
        let mount = URL(fileURLWithPath: "/usr/bin/mount")
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        let bind = try await ChildProcess.run(mount, ["--bind", source, target])
        guard bind.status == 0 else { throw TestFailure("cannot bind-mount \(source): \(bind.standardError)") }
        let remount = try await ChildProcess.run(mount, ["-o", "remount,ro,bind", target])
        guard remount.status == 0 else {
            _ = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/umount"), [target])
            throw TestFailure("cannot remount \(target) read-only: \(remount.standardError)")
        }
    }

    /// Runs `body` with `target` a read-only view of `source`, unmounted afterwards (off the pool,
    /// as every child process of the tests is waited for) whether `body` throws or not.
    static func whileMountedReadOnly(_ source: String, at target: String, _ body: () async throws -> Void) async throws {
        try await readOnlyMount(source, at: target)
        let umount = { _ = try? await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/umount"), [target]) }
        do { try await body() } catch {
            await umount()
            throw error
        }
        await umount()
    }

    @Test("a store on a read-only filesystem: reading commands answer as before, writing commands say read-only and change nothing",
          .enabled(if: canMount, "needs root and /usr/bin/mount to bind-mount a read-only view of a store"))
    func readOnlyFilesystem() async throws {
        let scratch = Scratch()
        let store = scratch.path("store")
        let view = scratch.path("read-only-view")
        #expect(await CommandRun.run(["store", "create", store, "--config", ExampleShop.file.path, "--bundle-id", "com.example.shop"]).status == 0)
        #expect(await CommandRun.run(["purchase", store, ExampleShop.potion, "--account", "ana", "--device", "phone"]).status == 0)
        #expect(await CommandRun.run(["purchase", store, ExampleShop.premiumMonthly, "--account", "ana", "--device", "phone"]).status == 0)
        let readingCommands: [[String]] = [
            ["transactions"], ["entitlements", "--account", "ana"], ["unfinished", "--device", "phone"], ["now"],
            ["notifications"], ["settings"], ["status", ExampleShop.plus, "--account", "ana"],
        ]
        var expected: [String] = []
        for command in readingCommands {
            let run = await CommandRun.run([command[0], store] + command.dropFirst())
            #expect(run.status == 0, "\(command): \(run.standardError)")
            expected.append(run.standardOutput)
        }
        try await Self.whileMountedReadOnly(store, at: view) {
            for (command, output) in zip(readingCommands, expected) {
                let run = await CommandRun.run([command[0], view] + command.dropFirst())
                #expect(run.status == 0, "\(command) on a read-only store: \(run.standardError)")
                #expect(run.standardOutput == output, "\(command) reads the same store")
            }
            let writingCommands: [[String]] = [
                ["purchase", view, ExampleShop.potion, "--account", "ana", "--device", "phone"],
                ["advance", view, "P1D"],
                ["settings", view, "askToBuyEnabled", "true"],
            ]
            for command in writingCommands {
                let run = await CommandRun.run(command)
                #expect(run.status == 1, "\(command)")
                #expect(run.standardError.contains("read-only"), "\(command): \(run.standardError)")
            }
        }
        let after = await CommandRun.run(["transactions", store])
        #expect(after.standardOutput == expected[0], "nothing was written")
    }
}
