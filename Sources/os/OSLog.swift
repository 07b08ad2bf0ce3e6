import Foundation

/// A log handle (a subsystem and a category), as the unified log's `OSLog`, for `os_log` and
/// `Logger(_:)`.
public final class OSLog: NSObject, @unchecked Sendable {
    /// Categories the unified log treats specially.
    public struct Category: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Signposts shown in Instruments' Points of Interest.
        public static let pointsOfInterest = Category(rawValue: "PointsOfInterest")
        /// Signposts recorded only while a tool asks for them.
        public static let dynamicTracing = Category(rawValue: "DynamicTracing")
        /// The same, with stacks.
        public static let dynamicStackTracing = Category(rawValue: "DynamicStackTracing")
    }

    let subsystem: String
    let category: String
    let enabled: Bool

    public init(subsystem: String, category: String) {
        self.subsystem = subsystem
        self.category = category
        self.enabled = true
    }

    public convenience init(subsystem: String, category: OSLog.Category) {
        self.init(subsystem: subsystem, category: category.rawValue)
    }

    private init(disabled: Void) {
        self.subsystem = ""
        self.category = ""
        self.enabled = false
    }

    /// The process's log, with no subsystem or category.
    public static let `default` = OSLog(subsystem: "", category: "")
    /// A log that writes nothing.
    public static let disabled = OSLog(disabled: ())

    /// Whether messages of `type` are written: every type, unless the log is ``disabled``.
    public func isEnabled(type: OSLogType) -> Bool { enabled }

    /// Whether signposts are written: they are, as debug lines, unless the log is ``disabled``.
    public var signpostsEnabled: Bool { enabled }

    func write(_ message: String, type: OSLogType) {
        guard enabled else { return }
        UnifiedLogOutput.write(message, type: type, subsystem: subsystem, category: category)
    }
}

/// Writes a message with `printf`-style arguments, as `os_log`: `%@` takes an object or string,
/// `%d`, `%ld`, `%f` numbers, and `%{public}@` / `%{private}@` say whether a value is shown.
/// Strings and objects are private unless marked public; numbers are public.
public func os_log(_ message: StaticString, dso: UnsafeRawPointer? = #dsohandle, log: OSLog = .default, type: OSLogType = .default,
                   _ args: any CVarArg...) {
    guard log.enabled else { return }
    log.write(PrintfMessage.render(message.description, args), type: type)
}

/// Writes a message at `type`, as `os_log(_:dso:log:_:)` does with an interpolated message.
public func os_log(_ type: OSLogType, dso: UnsafeRawPointer = #dsohandle, log: OSLog = .default, _ message: OSLogMessage) {
    guard log.enabled else { return }
    log.write(message.rendered(), type: type)
}

/// Writes a message with `printf`-style arguments at `type`.
public func os_log(_ type: OSLogType, dso: UnsafeRawPointer = #dsohandle, log: OSLog = .default, _ message: StaticString, _ args: any CVarArg...) {
    guard log.enabled else { return }
    log.write(PrintfMessage.render(message.description, args), type: type)
}

/// `os_log`'s format strings: each conversion (`%@`, `%d`, `%.2f`, `%ld`, …) is formatted alone
/// with its argument, as `String(format:)` does, after its privacy annotation (`%{public}@`,
/// `%{private}d`, `%{sensitive}@`) is read, so a redacted value never reaches the text.
enum PrintfMessage {
    private static let conversions: Set<Character> = ["@", "d", "D", "i", "u", "U", "x", "X", "o", "O", "f", "F", "e", "E", "g", "G",
                                                       "c", "C", "s", "S", "p", "a", "A"]

    static func render(_ format: String, _ args: [any CVarArg]) -> String {
        let reveal = UnifiedLogOutput.revealsPrivateValues
        let characters = Array(format)
        var output = ""
        var argument = 0
        var index = 0
        while index < characters.count {
            let character = characters[index]
            index += 1
            guard character == "%" else { output.append(character); continue }
            guard index < characters.count else { output.append("%"); break }
            if characters[index] == "%" { output.append("%"); index += 1; continue }
            var privacy = OSLogPrivacy.auto
            if characters[index] == "{", let close = characters[index...].firstIndex(of: "}") {
                for word in String(characters[(index + 1)..<close]).split(separator: ",") {
                    switch word.trimmingCharacters(in: .whitespaces) {
                    case "public": privacy = .public
                    case "private": privacy = .private
                    case "sensitive": privacy = .sensitive
                    default: break
                    }
                }
                index = close + 1
            }
            var specifier = "%"
            while index < characters.count, !conversions.contains(characters[index]) {
                specifier.append(characters[index])
                index += 1
            }
            guard index < characters.count else { output += specifier; break }
            let conversion = characters[index]
            specifier.append(conversion)
            index += 1
            guard argument < args.count else { output += specifier; continue }
            let text = String(format: specifier, args[argument])
            argument += 1
            output += privacy.apply(to: text, isPublicByDefault: !"@sS".contains(conversion), reveal: reveal)
        }
        return output
    }
}
