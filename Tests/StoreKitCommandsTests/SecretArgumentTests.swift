import Foundation
import Testing
import TestSupport

/// Secrets given to the commands stay away from other local users (#53): files holding them are
/// refused when others can read them, and a database password is refused on the command line.
struct SecretArgumentTests {
    @Test("--token-file, --key-file and --offer-key-file are refused when other users can read them, naming chmod 600")
    func secretFilesOthersCanRead() async throws {
        let scratch = Scratch()
        let secret = try scratch.write("0123456789abcdef0123456789abcdef\n", to: "secret")
        #expect(chmod(secret, 0o644) == 0)
        let database = "sqlite:\(scratch.path("backend.sqlite"))"
        let commands: [(String, [String])] = [
            ("--token-file", ["serve", scratch.path("no-store"), "--token-file", secret]),
            ("--key-file", ["backend", "reconcile", "--database", database, "--bundle-id", "com.example.shop", "--root", secret, "--key-file", secret]),
            ("--offer-key-file", ["backend", "serve", "--database", database, "--bundle-id", "com.example.shop", "--root", secret, "--offer-key-file", secret]),
        ]
        for (option, arguments) in commands {
            let refused = await CommandRun.run(arguments)
            #expect(refused.status == 64 && refused.standardError.contains("\(option) \(secret) can be read by other users")
                    && refused.standardError.contains("chmod 600 \(secret)"), "\(option): \(refused.standardError)")
        }
        // Group-readable alone is refused too.
        #expect(chmod(secret, 0o640) == 0)
        #expect(await CommandRun.run(commands[0].1).standardError.contains("can be read by other users"))
        // Owner-only: the check passes and the command goes on to what is wrong next (no store there).
        #expect(chmod(secret, 0o600) == 0)
        let owned = await CommandRun.run(commands[0].1)
        #expect(!owned.standardError.contains("can be read by other users"), "\(owned.standardError)")
    }

    @Test("--api-url takes https, or plain http only to this machine: the key's tokens never travel in clear to another host (#53)")
    func apiURLInClearOnlyToThisMachine() async throws {
        let scratch = Scratch()
        let key = try scratch.write("{}", to: "key.json")
        #expect(chmod(key, 0o600) == 0)
        let database = "sqlite:\(scratch.path("backend.sqlite"))"
        for url in ["http://api.example.com", "http://10.0.0.5:8080", "ftp://127.0.0.1"] {
            let refused = await CommandRun.run(["backend", "reconcile", "--database", database, "--bundle-id", "com.example.shop", "--root", key,
                                                "--key-file", key, "--api-url", url])
            #expect(refused.status == 64 && refused.standardError.contains("--api-url"), "\(url): \(refused.standardError)")
        }
        for url in ["http://127.0.0.1:9", "http://localhost:9", "https://api.example.com"] {
            let accepted = await CommandRun.run(["backend", "reconcile", "--database", database, "--bundle-id", "com.example.shop", "--root", key,
                                                 "--key-file", key, "--api-url", url])
            #expect(!accepted.standardError.contains("--api-url"), "\(url): \(accepted.standardError)")
        }
    }
}
