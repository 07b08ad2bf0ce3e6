/// One `storekit` subcommand.
///
/// A command declares itself once (``declaration``: name, group, what it does, every argument),
/// parses its arguments in `init(parsing:)` from a scanner that accepts only what the declaration
/// lists (throwing ``ValidationError`` for usage mistakes), and does its work in ``run(console:)``
/// (throwing ``CommandFailure`` or a module error for failures). Its help is made from the same
/// declaration, so the two cannot drift. The command tree in ``StoreKitCommand`` maps names to these types.
public protocol Command: Sendable {
    static var declaration: CommandDeclaration { get }

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError)

    func run(console: Console) async throws
}

extension Command {
    /// The words that select the command, such as `ca init`.
    public static var name: String { declaration.name }
    /// One line saying what the command does.
    public static var abstract: String { declaration.abstract }
    /// The argument synopsis after the command name.
    public static var usage: String { declaration.usage }
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
