import AppStoreSigning
import AppStoreSimulator
import AppStoreSimulatorSQL
import Foundation
import StoreKitCatalog
import Testing
import TestSupport

/// Secrets are private from their first byte, a store is created whole or not at all, and a store
/// refuses a certificate authority it was not created with.
@Suite(.timeLimit(.minutes(10)))
struct StoreSecurityTests {
    static func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? Int ?? -1) & 0o777
    }

    @Test("a new store's folder, ledger and keys are private to their owner, and no temporary file is left")
    func privateFiles() async throws {
        let scratch = Scratch()
        let store = scratch.path("store")
        let run = await CommandRun.run(["store", "create", store, "--config", ExampleShop.file.path, "--bundle-id", "com.example.shop"])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(try Self.mode(store) == 0o700)
        #expect(try Self.mode(store + "/store.sqlite") == 0o600)
        #expect(try Self.mode(store + "/ca") == 0o700)
        for key in ["root-key.pem", "intermediate-key.pem", "signing-key.pem"] { #expect(try Self.mode(store + "/ca/" + key) == 0o600, "\(key)") }
        let leftovers = try FileManager.default.subpathsOfDirectory(atPath: scratch.url.path).filter { $0.contains(".tmp") || $0.contains(".creating-") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    @Test("ca init makes a private folder with 0600 keys")
    func caInit() async throws {
        let scratch = Scratch()
        let run = await CommandRun.run(["ca", "init", scratch.path("ca")])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(try Self.mode(scratch.path("ca")) == 0o700)
        #expect(try Self.mode(scratch.path("ca/signing-key.pem")) == 0o600)
    }

    @Test("a store whose ca/ was replaced by another authority refuses to open, naming both roots")
    func replacedAuthority() async throws {
        let scratch = Scratch()
        let store = try await TestStores.directory(in: scratch).url
        try FileManager.default.removeItem(at: StoreDirectory.authorityURL(in: store))
        try CertificateAuthority.make().save(to: StoreDirectory.authorityURL(in: store))
        let run = await CommandRun.run(["transactions", store.path])
        #expect(run.status == 1)
        #expect(run.standardError.contains("is not the store's"), "\(run.standardError)")
    }

    @Test("a folder that is not empty is not turned into a store")
    func notEmpty() async throws {
        let scratch = Scratch()
        let folder = scratch.path("mine")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        _ = try scratch.write("keep me", to: "mine/notes.txt")
        let run = await CommandRun.run(["store", "create", folder, "--config", ExampleShop.file.path])
        #expect(run.status == 1)
        #expect(run.standardError.contains("is not empty"))
        #expect(try String(contentsOfFile: folder + "/notes.txt", encoding: .utf8) == "keep me")
    }

    @Test("kill -9 during store create, 30 times: afterwards there is a whole store or no store, never half of one",
          .enabled(if: FileManager.default.isExecutableFile(atPath: BuiltTool.storekit.path), "the storekit binary is not built"))
    func killDuringCreate() async throws {
        let scratch = Scratch()
        var random = SplitMix64(state: 0xC4EA7E)
        var whole = 0
        for round in 0..<30 {
            let store = scratch.path("store\(round)")
            let process = try Subprocess(BuiltTool.storekit, ["store", "create", store, "--config", ExampleShop.file.path, "--bundle-id", "com.example.shop"])
            try await Task.sleep(for: .milliseconds(Int.random(in: 5...80, using: &random)))
            process.signal(SIGKILL)
            _ = await process.termination()
            if FileManager.default.fileExists(atPath: store) {
                let now = await CommandRun.run(["now", store])
                #expect(now.status == 0, "a half-made store in round \(round): \(now.standardError)")
                whole += 1
            } else {
                let again = await CommandRun.run(["store", "create", store, "--config", ExampleShop.file.path])
                #expect(again.status == 0, "round \(round): \(again.standardError)")
            }
        }
        print("kill -9 during store create: \(whole) of 30 runs had finished, the rest left no store")
    }
}
