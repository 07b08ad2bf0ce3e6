/// A place in a `.storekit` file, written as a JSON path such as
/// `subscriptionGroups[0].subscriptions[2].recurringSubscriptionPeriod`.
public struct ConfigurationPath: Hashable, Sendable, CustomStringConvertible {
    enum Component: Hashable, Sendable {
        case key(String)
        case index(Int)
    }

    var components: [Component] = []

    /// The whole file.
    public static let root = ConfigurationPath()

    func appending(_ key: String) -> ConfigurationPath {
        ConfigurationPath(components: components + [.key(key)])
    }

    func appending(_ index: Int) -> ConfigurationPath {
        ConfigurationPath(components: components + [.index(index)])
    }

    public var description: String {
        if components.isEmpty { return "(top level)" }
        var text = ""
        for component in components {
            switch component {
            case .key(let key): text += text.isEmpty ? key : ".\(key)"
            case .index(let index): text += "[\(index)]"
            }
        }
        return text
    }
}

/// Something wrong, or worth knowing, about a `.storekit` file.
public struct ConfigurationProblem: Hashable, Sendable, CustomStringConvertible {
    public enum Severity: String, Hashable, Sendable {
        /// The file cannot be used as it is.
        case error
        /// The file works, but probably not as its author meant.
        case warning
    }

    public var severity: Severity
    /// Where in the file.
    public var path: ConfigurationPath
    /// What is wrong and what was expected.
    public var message: String

    public init(_ severity: Severity, at path: ConfigurationPath, _ message: String) {
        self.severity = severity
        self.path = path
        self.message = message
    }

    public var description: String { "\(path): \(message)" }
}

/// A `.storekit` file that cannot be used, with every problem found in one pass.
public struct ConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file's name, as given to the reader.
    public var fileName: String
    /// Every problem, errors first, each with its JSON path.
    public var problems: [ConfigurationProblem]

    public init(fileName: String, problems: [ConfigurationProblem]) {
        self.fileName = fileName
        self.problems = problems
    }

    /// One line per problem: `FILE: PATH: message`.
    public var description: String {
        problems.map { "\(fileName): \($0.severity == .warning ? "warning: " : "")\($0)" }.joined(separator: "\n")
    }
}

/// Collects problems while a file is read, so all of them are reported together.
final class ProblemLog {
    private(set) var problems: [ConfigurationProblem] = []

    func error(_ path: ConfigurationPath, _ message: String) {
        problems.append(ConfigurationProblem(.error, at: path, message))
    }

    func warning(_ path: ConfigurationPath, _ message: String) {
        problems.append(ConfigurationProblem(.warning, at: path, message))
    }

    var hasErrors: Bool { problems.contains { $0.severity == .error } }
}
