import Foundation
import ServiceLogging

/// `--log-level LEVEL` and `--log-format text|json` of the serving commands: what a server logs on
/// standard error, and how.
struct LoggingOptions {
    static let arguments: [ArgumentDeclaration] = [
        .option("--log-level", "LEVEL", "the least a log line says: trace, debug, info (default), notice, warning, error or critical"),
        .option("--log-format", "text|json", "how log lines are written on standard error (default text)"),
    ]

    var level: Logger.Level
    var format: StreamLogHandler.Format

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        level = try arguments.value("--log-level", expected: Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")) {
            Logger.Level(name: $0)
        } ?? .info
        format = try arguments.value("--log-format", expected: "text or json") { StreamLogHandler.Format(rawValue: $0) } ?? .text
    }

    /// A logger writing lines of this format to standard error.
    func logger(label: String) -> Logger {
        Logger(label: label, level: level, handler: StreamLogHandler(format: format))
    }
}
