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
