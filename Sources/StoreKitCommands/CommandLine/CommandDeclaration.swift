/// Where a command belongs in `storekit help`.
public enum CommandGroup: String, Sendable, CaseIterable {
    case store = "Stores"
    case purchases = "Purchases and transactions"
    case subscriptions = "Subscriptions"
    case server = "Serving"
    case backend = "The backend"
    case signing = "Signing and verifying"
    case benchmarks = "Benchmarks"
}

/// One argument a command takes, as its help lists it and its parsing reads it.
public struct ArgumentDeclaration: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// A word in order, which must be there (`DIR`).
        case positional
        /// A word in order that may be left out (`[FILE]`).
        case optionalPositional
        /// Every word left, one or more (`KEY…`).
        case remaining
        /// `--name VALUE`, at most once.
        case option
        /// `--name VALUE`, as many times as needed.
        case repeating
        /// `--name VALUE…`: every word after the option up to the next option (a shell glob's files),
        /// and the option may be given again.
        case list
        /// `--name`, alone.
        case flag
    }

    /// `DIR` or `--host`.
    public let name: String
    /// What an option's value is called in the synopsis (`HOST`); `nil` for flags and words.
    public let value: String?
    public let kind: Kind
    /// Whether an option must be given.
    public let isRequired: Bool
    /// One line saying what it is.
    public let help: String

    public static func positional(_ name: String, _ help: String) -> Self {
        Self(name: name, value: nil, kind: .positional, isRequired: true, help: help)
    }

    public static func optionalPositional(_ name: String, _ help: String) -> Self {
        Self(name: name, value: nil, kind: .optionalPositional, isRequired: false, help: help)
    }

    public static func remaining(_ name: String, _ help: String) -> Self {
        Self(name: name, value: nil, kind: .remaining, isRequired: true, help: help)
    }

    public static func option(_ name: String, _ value: String, _ help: String, required: Bool = false) -> Self {
        Self(name: name, value: value, kind: .option, isRequired: required, help: help)
    }

    public static func repeating(_ name: String, _ value: String, _ help: String, required: Bool = false) -> Self {
        Self(name: name, value: value, kind: .repeating, isRequired: required, help: help)
    }

    public static func list(_ name: String, _ value: String, _ help: String, required: Bool = false) -> Self {
        Self(name: name, value: value, kind: .list, isRequired: required, help: help)
    }

    public static func flag(_ name: String, _ help: String) -> Self {
        Self(name: name, value: nil, kind: .flag, isRequired: false, help: help)
    }

    /// How it reads in the synopsis: `DIR`, `[FILE]`, `KEY…`, `--config FILE`, `[--host HOST]`,
    /// `[--root CERT…]`, `[--json]`.
    var synopsis: String {
        switch kind {
        case .positional: return name
        case .optionalPositional: return "[\(name)]"
        case .remaining: return "\(name)…"
        case .flag: return "[\(name)]"
        case .option: return isRequired ? "\(name) \(value ?? "VALUE")" : "[\(name) \(value ?? "VALUE")]"
        case .repeating, .list: return isRequired ? "\(name) \(value ?? "VALUE")…" : "[\(name) \(value ?? "VALUE")…]"
        }
    }

    var isWord: Bool { kind == .positional || kind == .optionalPositional || kind == .remaining }
}

/// A command's name, place in the help, what it does and every argument it takes: declared once, so
/// the help printed and the arguments accepted are the same list. ``ArgumentScanner`` reads only
/// what the declaration lists (an option it does not list is unknown), and the synopsis and the
/// argument list of `storekit COMMAND --help` are made from it.
public struct CommandDeclaration: Sendable {
    /// The words that select the command, such as `ca init`.
    public let name: String
    public let group: CommandGroup
    /// One line saying what the command does.
    public let abstract: String
    public let arguments: [ArgumentDeclaration]
    /// More to say in the command's help: values a word takes, how options go together.
    public let discussion: String?

    public init(_ name: String, group: CommandGroup, abstract: String, arguments: [ArgumentDeclaration] = [], discussion: String? = nil) {
        self.name = name
        self.group = group
        self.abstract = abstract
        self.arguments = arguments
        self.discussion = discussion
    }

    /// The same arguments under another name: a command that parses as another with one setting changed.
    public func variant(_ name: String, group: CommandGroup? = nil, abstract: String, dropping dropped: Set<String> = [],
                        adding added: [ArgumentDeclaration] = [], discussion: String? = nil) -> CommandDeclaration {
        CommandDeclaration(name, group: group ?? self.group, abstract: abstract,
                           arguments: arguments.filter { !dropped.contains($0.name) } + added, discussion: discussion)
    }

    /// The argument synopsis after the command's name: words first, in order, then options.
    public var usage: String {
        (arguments.filter(\.isWord) + arguments.filter { !$0.isWord }).map(\.synopsis).joined(separator: " ")
    }

    /// `storekit NAME --help`: the synopsis, what it does, each argument, and the discussion.
    public var help: String {
        var lines = ["usage: storekit \(name) \(usage)", "", abstract]
        if !arguments.isEmpty {
            let width = min(28, arguments.map { $0.synopsisForList.count }.max() ?? 0)
            lines.append("")
            for argument in arguments.filter(\.isWord) + arguments.filter({ !$0.isWord }) {
                let left = argument.synopsisForList
                let padding = left.count < width ? String(repeating: " ", count: width - left.count) : ""
                lines.append("  \(left)\(padding)  \(argument.help)")
            }
        }
        if let discussion { lines += ["", discussion] }
        return lines.joined(separator: "\n")
    }

    func declares(_ name: String, as kinds: Set<ArgumentDeclaration.Kind>) -> Bool {
        arguments.contains { $0.name == name && kinds.contains($0.kind) }
    }
}

extension ArgumentDeclaration {
    /// How it reads in the argument list of a command's help: `--host HOST`, `--root CERT…`, `DIR`.
    var synopsisForList: String {
        switch kind {
        case .positional, .optionalPositional, .flag: return name
        case .remaining: return "\(name)…"
        case .option: return "\(name) \(value ?? "VALUE")"
        case .repeating, .list: return "\(name) \(value ?? "VALUE")…"
        }
    }
}
