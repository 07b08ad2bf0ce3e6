/// One `storekit` subcommand.
///
/// A command parses its arguments in `init(parsing:)` (throwing ``ValidationError`` for usage
/// mistakes) and does its work in ``run(console:)`` (throwing ``CommandFailure`` or a module error
/// for failures). The command tree in ``StoreKitCommand`` maps names to these types.
public protocol Command: Sendable {
    /// The word that selects the command, such as `verify`.
    static var name: String { get }
    /// One line saying what the command does.
    static var abstract: String { get }
    /// The argument synopsis after the command name.
    static var usage: String { get }

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError)

    func run(console: Console) async throws
}

/// A command that parses and runs as another command with one setting changed, so that only its
/// name, words and that setting are its own (`unfinished` is `entitlements` with another view,
/// `approve` is `refund` with another action, …).
protocol CommandVariant: Command {
    associatedtype Base: Command
    /// Turns the parsed base command into this variant.
    static func adapt(_ base: inout Base)
    var base: Base { get }
    init(base: Base)
}

extension CommandVariant {
    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        var base = try Base(parsing: &arguments)
        Self.adapt(&base)
        self.init(base: base)
    }

    func run(console: Console) async throws { try await base.run(console: console) }
}
