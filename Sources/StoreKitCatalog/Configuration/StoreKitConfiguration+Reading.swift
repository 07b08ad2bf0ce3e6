import AppStoreModels
import Foundation

extension StoreKitConfiguration {
    /// A configuration that was read, and what is worth knowing about it.
    public struct ReadResult: Sendable {
        public var configuration: StoreKitConfiguration
        /// Problems that do not stop the file from working.
        public var warnings: [ConfigurationProblem]
    }

    /// Reads a `.storekit` file's bytes.
    ///
    /// Reading is lenient where Xcode is (absent keys, `null`, unknown keys) and strict where a wrong
    /// value would make the store misbehave. Every problem in the file is found in one pass and
    /// reported together, each with its JSON path. Input that is not JSON at all is one problem.
    ///
    /// - Parameter fileName: The name used in problem reports.
    public static func read(_ data: Data, fileName: String) throws(ConfigurationError) -> ReadResult {
        let tree: JSONValue
        do {
            tree = try JSONParser.parse(data)
        } catch {
            let reason = data.isEmpty ? "the file is empty" : "not valid JSON (\(error))"
            throw ConfigurationError(fileName: fileName, problems: [
                ConfigurationProblem(.error, at: .root, "not a StoreKit configuration: \(reason)"),
            ])
        }
        let log = ProblemLog()
        guard var reader = ObjectReader(tree, at: .root, log: log) else {
            throw ConfigurationError(fileName: fileName, problems: log.problems)
        }
        let configuration = StoreKitConfiguration(reading: &reader)
        configuration.validate(into: log)
        let errors = log.problems.filter { $0.severity == .error }
        let warnings = log.problems.filter { $0.severity == .warning }
        guard errors.isEmpty else { throw ConfigurationError(fileName: fileName, problems: errors + warnings) }
        return ReadResult(configuration: configuration, warnings: warnings)
    }

    /// Reads a `.storekit` file from disk.
    public static func load(contentsOf url: URL) throws(ConfigurationError) -> ReadResult {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw ConfigurationError(fileName: url.path, problems: [
                ConfigurationProblem(.error, at: .root, isDirectory.boolValue ? "is a directory, not a .storekit file" : "no such file"),
            ])
        }
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw ConfigurationError(fileName: url.path, problems: [ConfigurationProblem(.error, at: .root, "cannot be read")])
        }
        return try read(data, fileName: url.lastPathComponent)
    }

    /// The configuration as JSON the way Xcode writes it: sorted keys, two-space indentation.
    public func jsonData() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Encoding a tree of plain JSON values cannot fail.
        return (try? encoder.encode(jsonValue)) ?? Data()
    }

    /// The whole configuration as a JSON tree, unknown keys included.
    public var jsonTree: JSONValue { jsonValue }
}

extension JSONValue {
    /// Whether two JSON trees mean the same: object members compared by key, a `null` member the
    /// same as an absent one, and numbers compared by value.
    public func isEquivalent(to other: JSONValue) -> Bool {
        switch (self, other) {
        case (.object(let left), .object(let right)):
            let leftKeys = Set(left.filter { $0.value != .null }.keys)
            let rightKeys = Set(right.filter { $0.value != .null }.keys)
            return leftKeys == rightKeys && leftKeys.allSatisfy { left[$0]!.isEquivalent(to: right[$0]!) }
        case (.array(let left), .array(let right)):
            return left.count == right.count && zip(left, right).allSatisfy { $0.isEquivalent(to: $1) }
        case (.integer(let left), .number(let right)), (.number(let right), .integer(let left)):
            return Double(left) == right
        default:
            return self == other
        }
    }
}
