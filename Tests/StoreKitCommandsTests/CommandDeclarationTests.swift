import Foundation
import StoreKitBenchmarks
import StoreKitCommands
import Testing

/// Every command is declared once, and its help and its parsing are that declaration: each argument
/// it declares is read, nothing it does not declare is accepted, and the help lists it by group.
@Suite(.timeLimit(.minutes(10)))
struct CommandDeclarationTests {
    static let tree = StoreKitCommand.commands + Benchmarks.commands

    /// A value a command accepts for an argument, chosen by how the declaration names it.
    static func sample(for argument: ArgumentDeclaration) -> String {
        let placeholder = argument.value ?? argument.name
        let specific: [String: String] = [
            "--database": "sqlite:/tmp/declarations.sqlite", "--api-url": "http://127.0.0.1:9", "--postgres": "postgres://u@127.0.0.1:9/d",
            "--ocsp-url": "none", "--offer": "introductory", "--environment": "Xcode", "--sizes": "1000", "--format": "server-api",
            "--key-file": "/tmp/key.json", "--log-level": "info",
        ]
        if let value = specific[argument.name] { return value }
        switch placeholder {
        case "N", "MS", "SEQUENCE", "ID", "TRANSACTION_ID", "ORIGINAL_TRANSACTION_ID": return "1"
        case "S": return "0.01"
        case "DATE", "YYYY-MM-DD": return "2026-01-01"
        case "UUID": return "4E3C6A9B-70A4-4C52-8A16-2A1E0F6E1D11"
        case "DURATION": return "P1D"
        case "STATE": return "on"
        case "ACTION": return "request"
        case "CERTIFICATE": return "leaf"
        case "SHEET": return "billingIssue"
        case "RESPONSE": return "dismiss"
        case "ADDRESS": return "127.0.0.1"
        default: return placeholder.split(separator: "|").first.map(String.init) ?? "x"
        }
    }

    /// The arguments every run of a command needs: a sample for each word it must have and each option it requires.
    static func required(_ declaration: CommandDeclaration) -> [String] {
        var arguments: [String] = []
        for argument in declaration.arguments where argument.isRequired {
            switch argument.kind {
            case .positional, .remaining: arguments.append(sample(for: argument))
            case .option, .repeating, .list: arguments += [argument.name, sample(for: argument)]
            case .optionalPositional, .flag: break
            }
        }
        return arguments
    }

    @Test("every declared argument is read by the command's parsing, and none is refused as unknown")
    func declaredIsParsed() {
        for type in Self.tree {
            let declaration = type.declaration
            for argument in declaration.arguments {
                var given = Self.required(declaration)
                switch argument.kind {
                case .flag: given.append(argument.name)
                case .option, .repeating, .list: if !argument.isRequired { given += [argument.name, Self.sample(for: argument)] }
                case .optionalPositional: given.append(Self.sample(for: argument))
                case .positional, .remaining: break
                }
                var scanner = ArgumentScanner(given, declaration: declaration)
                var message = ""
                do {
                    _ = try type.init(parsing: &scanner)
                    try scanner.finish()
                } catch {
                    message = error.message
                }
                #expect(scanner.asked.contains(argument.name) || argument.isWordRead(by: scanner), "storekit \(declaration.name) declares \(argument.name) but does not read it")
                #expect(!message.contains("unknown option \(argument.name)") && !message.contains("does not list"),
                        "storekit \(declaration.name) \(given.joined(separator: " ")): \(message)")
            }
        }
    }

    @Test("a list option takes every word up to the next option, and may be given again: store import DIR --from *.json")
    func listOption() throws {
        let declaration = CommandDeclaration("sample", group: .store, abstract: "", arguments: [
            .positional("DIR", ""), .list("--from", "FILE", ""), .repeating("--root", "CERT", ""),
        ])
        var scanner = ArgumentScanner(["shop", "--from", "a.json", "b.json", "--root", "r.cer", "x.cer", "--from=c.json"], declaration: declaration)
        #expect(try scanner.values("--from") == ["a.json", "b.json", "c.json"])
        // A repeating option still takes one value: the word after it is not its.
        #expect(try scanner.values("--root") == ["r.cer"])
        #expect(try scanner.positional("DIR") == "shop")
        #expect(try scanner.positional("DIR") == "x.cer")
        try scanner.finish()
        #expect(declaration.usage == "DIR [--from FILE…] [--root CERT…]")

        let help = try #require(Self.tree.first { $0.declaration.name == "store import" })
        var misplaced = ArgumentScanner(["store", "import", "--from", "a.json", "shop"].dropFirst(2).map { $0 }, declaration: help.declaration)
        #expect {
            _ = try help.init(parsing: &misplaced)
        } throws: { error in
            "\(error)".contains("comes before --from")
        }
    }

    @Test("an option a command does not declare is refused, even one another command takes")
    func undeclaredIsRefused() async {
        let run = await CommandRun.run(["refund", "/tmp/store", "1", "--decline"])
        #expect(run.status == 64)
        #expect(run.standardError.hasPrefix("error: unknown option --decline"))
        let accepted = await CommandRun.run(["request-refund", "/tmp/nowhere", "1", "--decline"])
        #expect(!accepted.standardError.contains("unknown option"))
    }

    @Test("help lists every command once, under its group, and each command's help is its declaration")
    func help() async {
        let overview = await CommandRun.run(["help"])
        let lines = overview.standardOutput.split(separator: "\n").map(String.init)
        for type in Self.tree {
            let listed = lines.filter { $0.hasPrefix("  \(type.name) ") && $0.dropFirst(type.name.count + 2).drop { $0 == " " } == type.abstract }
            #expect(listed.count == 1, "\(type.name) once in the help")
        }
        var position = overview.standardOutput.startIndex
        for group in CommandGroup.allCases {
            let range = overview.standardOutput.range(of: "\n\(group.rawValue):\n", range: position..<overview.standardOutput.endIndex)
            #expect(range != nil, "\(group.rawValue) in order")
            if let range { position = range.upperBound }
        }
        let serve = await CommandRun.run(["serve", "--help"])
        #expect(serve.standardOutput.hasPrefix("usage: storekit serve [DIR] [--database URL] [--database-file FILE] [--host ADDRESS]"))
        #expect(serve.standardOutput.contains("  --log-format text|json"))
    }
}

extension ArgumentDeclaration {
    /// Words read by a scanner that was not asked for them by name (`nextWord()` reads optional words).
    func isWordRead(by scanner: ArgumentScanner) -> Bool { kind == .optionalPositional || kind == .remaining }
}
