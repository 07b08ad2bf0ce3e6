import StoreKitCommands
import Testing

@Suite(.timeLimit(.minutes(10)))
struct ArgumentScannerTests {
    @Test("options take the next argument or a value after =, repeatable ones collect every value")
    func optionForms() throws {
        var scanner = ArgumentScanner(["--root", "a.cer", "--root=b.cer", "--json", "file.jws", "--bundle-id", "com.x"])
        let roots = try scanner.values("--root")
        let json = scanner.flag("--json")
        let online = scanner.flag("--online")
        let bundleId = try scanner.requiredValue("--bundle-id")
        let file = try scanner.positional("FILE")
        #expect(roots == ["a.cer", "b.cer"])
        #expect(json && !online)
        #expect(bundleId == "com.x")
        #expect(file == "file.jws")
        #expect(throws: Never.self) { try scanner.finish() }
    }

    /// The message of the usage error `body` throws, or `nil`.
    private func usageError(_ arguments: [String], _ body: (inout ArgumentScanner) throws -> Void) -> String? {
        var scanner = ArgumentScanner(arguments)
        do {
            try body(&scanner)
            return nil
        } catch {
            return (error as? ValidationError)?.message ?? "not a usage error: \(error)"
        }
    }

    @Test("leftover and missing arguments are usage errors naming them")
    func usageErrors() {
        let leftover = usageError(["--bogus"]) { try $0.finish() }
        let stray = usageError(["stray"]) { try $0.finish() }
        let noValue = usageError(["--root"]) { _ = try $0.values("--root") }
        let twice = usageError(["--kind", "a", "--kind", "b"]) { _ = try $0.value("--kind") }
        let missing = usageError([]) { _ = try $0.positional("JWS_OR_FILE") }
        let unparsable = usageError(["--seconds", "soon"]) { _ = try $0.value("--seconds", expected: "a number") { Double($0) } }
        #expect(leftover == "unknown option --bogus")
        #expect(stray == "unexpected argument stray")
        #expect(noValue == "--root needs a value")
        #expect(twice == "--kind is given 2 times")
        #expect(missing == "missing JWS_OR_FILE")
        #expect(unparsable == "--seconds must be a number, not \"soon\"")
    }
}
