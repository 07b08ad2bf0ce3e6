import AppStoreSigning
import AppStoreSimulator
import StoreKitCatalog
import Foundation

/// The `storekit` tool: the root of the command tree.
public enum StoreKitCommand {
    /// Commands by their full name (`ca init` is two words).
    public static let commands: [any Command.Type] = [
        StoreCreate.self, StoreImport.self, StoreExport.self, ServeCommand.self, APIKeyCreateCommand.self, APIKeyRevokeCommand.self, APIKeyListCommand.self, PurchaseCommand.self, TransactionsCommand.self, TransactionViewCommand.self, UnfinishedCommand.self,
        FinishCommand.self, UpdatesCommand.self, LaunchCommand.self, TransactionControl.self, RequestRefundCommand.self,
        ApproveCommand.self, DeclineCommand.self, ReverseRefundCommand.self, DeleteCommand.self, ResolveCommand.self, AccountCommand.self, PurchaseIntentCommand.self, CustomerResponseCommand.self, SettingsCommand.self,
        NotificationsCommand.self, TestNotificationCommand.self,
        AdvanceCommand.self, NowCommand.self, StatusCommand.self, RenewalCommand.self, ExpireCommand.self, ForceRenewCommand.self,
        PriceIncreaseCommand.self, ExtendCommand.self, TimelineCommand.self, OfferSignatureCommand.self, OfferKeyCommand.self, AvailabilityCommand.self,
        CatalogCommand.self, Verify.self, Decode.self, CertificateAuthorityInit.self, CertificateAuthorityExport.self, CertificateAuthorityRevoke.self,
        CertificateAuthoritySign.self, StressPurchaseCommand.self, JournalShowCommand.self, JournalConsumeCommand.self,
        BackendServeCommand.self, BackendReconcileCommand.self, BackendKeyCreateCommand.self, BackendKeyListCommand.self, BackendKeyRevokeCommand.self, BackendMetricsCommand.self,
        BackendMetricsRebuildCommand.self, RetentionReviewCommand.self, RetentionListCommand.self, CancelSubscriptionCommand.self,
        BackendRetentionRuleAddCommand.self, BackendRetentionRuleListCommand.self, BackendRetentionRuleRemoveCommand.self,
    ]

    /// Runs the tool with `arguments` (without the program name) and returns the exit status.
    ///
    /// - Parameter commands: The tree to run; the `storekit` executable adds the benchmarks
    ///   (`StoreKitBenchmarks`) to ``commands``.
    public static func main(_ arguments: [String], console: Console = .standard, commands: [any Command.Type] = commands) async -> Int32 {
        if arguments.isEmpty || arguments == ["help"] || arguments == ["--help"] || arguments == ["-h"] {
            console.print(help(commands))
            return ExitStatus.success
        }
        guard let (type, rest) = resolve(arguments, in: commands) else {
            console.printError("error: unknown command \(arguments.prefix(2).joined(separator: " "))\n\n\(help(commands))")
            return ExitStatus.usage
        }
        if rest.contains("--help") || rest.contains("-h") {
            console.print(type.declaration.help)
            return ExitStatus.success
        }
        var scanner = ArgumentScanner(rest, declaration: type.declaration)
        let command: any Command
        do {
            command = try type.init(parsing: &scanner)
            try scanner.finish()
        } catch {
            console.printError("error: \(error.message)\nusage: storekit \(type.name) \(type.usage)")
            return ExitStatus.usage
        }
        do {
            try await command.run(console: console)
            return ExitStatus.success
        } catch let error as VerificationError {
            console.printError("error: \(error.code.rawValue): \(error.reason)")
        } catch let error as AppStoreError {
            console.printError("error: \(error)")
        } catch let error as ConfigurationError {
            for problem in error.problems {
                console.printError("\(problem.severity.rawValue): \(error.fileName): \(problem)")
            }
        } catch let error as ValidationError {
            console.printError("error: \(error.message)\nusage: storekit \(type.name) \(type.usage)")
            return ExitStatus.usage
        } catch {
            console.printError("error: \(error)")
        }
        return ExitStatus.failure
    }

    /// The command whose name the arguments start with (longest name first), and the rest.
    static func resolve(_ arguments: [String], in commands: [any Command.Type]) -> (any Command.Type, [String])? {
        let sorted = commands.sorted { $0.name.split(separator: " ").count > $1.name.split(separator: " ").count }
        for type in sorted {
            let words = type.name.split(separator: " ").map(String.init)
            if arguments.count >= words.count, Array(arguments.prefix(words.count)) == words {
                return (type, Array(arguments.dropFirst(words.count)))
            }
        }
        return nil
    }

    /// The overview printed by `storekit help`: the commands by group, each with what it does.
    public static func help(_ commands: [any Command.Type]) -> String {
        let width = commands.map { $0.name.count }.max() ?? 0
        var sections: [String] = []
        for group in CommandGroup.allCases {
            let members = commands.filter { $0.declaration.group == group }
            guard !members.isEmpty else { continue }
            let lines = members.map { "  \($0.name.padding(toLength: width, withPad: " ", startingAt: 0))  \($0.abstract)" }
            sections.append("\(group.rawValue):\n" + lines.joined(separator: "\n"))
        }
        return """
        storekit: a local App Store, StoreKit 2 semantics and App Store signed data, anywhere Swift runs.

        usage: storekit COMMAND [ARGUMENTS]

        \(sections.joined(separator: "\n\n"))

        Run `storekit COMMAND --help` for a command's arguments.
        """
    }
}
