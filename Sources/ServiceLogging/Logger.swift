import Foundation
import Synchronization

/// Where a server says what happened, in swift-log's shape (written here, as no package can be
/// fetched): a label, a level below which records are dropped, key-value metadata that travels with
/// the logger (a request's id), and a handler that writes each record.
///
/// ```swift
/// var logger = Logger(label: "storekit.serve", handler: StreamLogHandler(format: .text))
/// logger[metadataKey: "request_id"] = "7f3a…"
/// logger.error("storage failed", metadata: ["path": "/v1/devices/phone/purchases"])
/// ```
///
/// Libraries take a logger from whoever runs them; a logger nobody configured drops everything
/// (``Logger/disabled``).
public struct Logger: Sendable {
    /// How much a record matters, least first.
    public enum Level: String, Sendable, Hashable, CaseIterable, Comparable, Codable {
        case trace, debug, info, notice, warning, error, critical

        public static func < (lhs: Level, rhs: Level) -> Bool {
            allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
        }
    }

    /// Values that describe a record, by key.
    public typealias Metadata = [String: String]

    public let label: String
    /// Records below this level are dropped.
    public var level: Level
    /// Metadata every record of this logger carries.
    public var metadata: Metadata
    public let handler: any LogHandler

    public init(label: String, level: Level = .info, metadata: Metadata = [:], handler: any LogHandler) {
        self.label = label
        self.level = level
        self.metadata = metadata
        self.handler = handler
    }

    /// A logger that writes nothing.
    public static let disabled = Logger(label: "disabled", level: .critical, handler: DroppingLogHandler())

    public subscript(metadataKey key: String) -> String? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// The same logger with more metadata.
    public func with(_ more: Metadata) -> Logger {
        var copy = self
        copy.metadata.merge(more) { _, new in new }
        return copy
    }

    /// Writes a record if `level` is at least the logger's.
    public func log(level: Level, _ message: @autoclosure () -> String, metadata more: @autoclosure () -> Metadata = [:]) {
        guard level >= self.level else { return }
        var all = metadata
        all.merge(more()) { _, new in new }
        handler.write(LogRecord(label: label, level: level, message: message(), metadata: all))
    }

    public func trace(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) { log(level: .trace, message(), metadata: metadata()) }
    public func debug(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) { log(level: .debug, message(), metadata: metadata()) }
    public func info(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) { log(level: .info, message(), metadata: metadata()) }
    public func notice(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) { log(level: .notice, message(), metadata: metadata()) }
    public func warning(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) { log(level: .warning, message(), metadata: metadata()) }
    public func error(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) { log(level: .error, message(), metadata: metadata()) }
    public func critical(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) { log(level: .critical, message(), metadata: metadata()) }
}

/// One record, as a handler receives it.
public struct LogRecord: Sendable, Hashable {
    public var label: String
    public var level: Logger.Level
    public var message: String
    public var metadata: Logger.Metadata

    public init(label: String, level: Logger.Level, message: String, metadata: Logger.Metadata = [:]) {
        self.label = label
        self.level = level
        self.message = message
        self.metadata = metadata
    }
}

/// Writes records somewhere. Handlers are called from any thread, at once; each must be safe for that.
public protocol LogHandler: Sendable {
    func write(_ record: LogRecord)
}

/// Drops every record.
public struct DroppingLogHandler: LogHandler {
    public init() {}
    public func write(_ record: LogRecord) {}
}

/// Keeps every record, for tests that check what was logged.
public final class RecordingLogHandler: LogHandler {
    private let records = Mutex<[LogRecord]>([])

    public init() {}

    public func write(_ record: LogRecord) { records.withLock { $0.append(record) } }

    /// What was written so far, oldest first.
    public var written: [LogRecord] { records.withLock { $0 } }
}
