/// Reads a command's arguments: options by name, flags, then positionals in order.
///
/// Options take their value as the next argument or after `=` (`--root a.cer`, `--root=a.cer`).
/// Anything left over when the command calls ``finish()`` is a usage error, so a mistyped option
/// never passes silently. Given the command's ``CommandDeclaration``, it reads only what the
/// declaration lists: an option it does not list stays unread (and ``finish()`` calls it unknown),
/// and reading a word it does not list is a mistake in the command, reported as one.
public struct ArgumentScanner {
    private var remaining: [String]
    private let declaration: CommandDeclaration?
    /// The names the command asked for, given or not (the tests check every declared one is asked for).
    public private(set) var asked: Set<String> = []

    public init(_ arguments: [String], declaration: CommandDeclaration? = nil) {
        self.remaining = arguments
        self.declaration = declaration
    }

    /// Whether the declaration (if any) lists `name` as one of `kinds`; records that it was asked for.
    private mutating func accepts(_ name: String, as kinds: Set<ArgumentDeclaration.Kind>) -> Bool {
        asked.insert(name)
        return declaration?.declares(name, as: kinds) ?? true
    }

    /// Whether no arguments are left.
    public var isEmpty: Bool { remaining.isEmpty }

    /// Removes and returns the next argument if it is not an option.
    public mutating func nextWord() -> String? {
        if let declaration, !declaration.arguments.contains(where: { $0.kind == .optionalPositional || $0.kind == .remaining }) { return nil }
        guard let first = remaining.first, !first.hasPrefix("--") || first == "-" else { return nil }
        remaining.removeFirst()
        return first
    }

    /// Whether `name` was given; removes every occurrence.
    public mutating func flag(_ name: String) -> Bool {
        guard accepts(name, as: [.flag]) else { return false }
        let before = remaining.count
        remaining.removeAll { $0 == name }
        return remaining.count != before
    }

    /// Every value given for a repeatable option, in order; for a ``ArgumentDeclaration/Kind/list``
    /// option, every word after each occurrence up to the next option (`--from *.json`).
    public mutating func values(_ name: String) throws(ValidationError) -> [String] {
        guard accepts(name, as: [.option, .repeating, .list]) else { return [] }
        let takesWords = declaration?.declares(name, as: [.list]) ?? false
        var values: [String] = []
        var index = 0
        while index < remaining.count {
            let argument = remaining[index]
            if argument == name {
                guard index + 1 < remaining.count else { throw ValidationError("\(name) needs a value") }
                var end = index + 2
                if takesWords {
                    while end < remaining.count, !remaining[end].hasPrefix("--") { end += 1 }
                }
                values += remaining[index + 1..<end]
                remaining.removeSubrange(index..<end)
            } else if argument.hasPrefix(name + "=") {
                values.append(String(argument.dropFirst(name.count + 1)))
                remaining.remove(at: index)
            } else {
                index += 1
            }
        }
        return values
    }

    /// The value of an option given at most once.
    public mutating func value(_ name: String) throws(ValidationError) -> String? {
        let all = try values(name)
        guard all.count <= 1 else { throw ValidationError("\(name) is given \(all.count) times") }
        return all.first
    }

    /// The value of an option that must be given.
    public mutating func requiredValue(_ name: String) throws(ValidationError) -> String {
        guard let value = try value(name) else { throw ValidationError("missing \(name)") }
        return value
    }

    /// The value of an option, read by `parse`, which returns `nil` for a bad value.
    public mutating func value<T>(_ name: String, expected: String, _ parse: (String) -> T?) throws(ValidationError) -> T? {
        guard let text = try value(name) else { return nil }
        guard let parsed = parse(text) else { throw ValidationError("\(name) must be \(expected), not \"\(text)\"") }
        return parsed
    }

    /// The next positional argument, which must be there.
    public mutating func positional(_ name: String, missing meaning: String? = nil) throws(ValidationError) -> String {
        guard accepts(name, as: [.positional, .optionalPositional, .remaining]) else {
            throw ValidationError("this command reads \(name), which its declaration does not list (a mistake in storekit)")
        }
        guard let index = remaining.firstIndex(where: { !$0.hasPrefix("--") || $0 == "-" }) else {
            throw ValidationError("missing \(meaning ?? name)")
        }
        return remaining.remove(at: index)
    }

    /// Fails on anything not consumed.
    public func finish() throws(ValidationError) {
        guard remaining.isEmpty else {
            let kind = remaining[0].hasPrefix("--") ? "unknown option" : "unexpected argument"
            throw ValidationError("\(kind) \(remaining[0])")
        }
    }
}

extension ArgumentScanner {
    /// `--account NAME` and `--device NAME`, at least one of them: whose view of the store a command shows.
    mutating func accountOrDevice() throws(ValidationError) -> (account: String?, device: String?) {
        let account = try value("--account")
        let device = try value("--device")
        if account == nil, device == nil { throw ValidationError("name an --account or a --device") }
        return (account, device)
    }
}
