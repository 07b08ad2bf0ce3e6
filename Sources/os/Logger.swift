import Foundation

/// Writes messages to the log of a subsystem and category, as the unified log's `Logger`.
///
/// ```swift
/// let logger = Logger(subsystem: "com.example.shop", category: "Store")
/// logger.error("purchase of \(product.id, privacy: .public) failed: \(error.localizedDescription)")
/// ```
///
/// On this platform the lines go where ``UnifiedLogOutput`` says: standard error, in the unified
/// log's format, unless a test or tool routes them elsewhere.
public struct Logger: @unchecked Sendable {
    let handle: OSLog

    /// A logger for `category` of `subsystem` (by convention the app's bundle identifier).
    public init(subsystem: String, category: String) {
        self.handle = OSLog(subsystem: subsystem, category: category)
    }

    /// A logger writing to `logObj`.
    public init(_ logObj: OSLog) {
        self.handle = logObj
    }

    /// The process's default log.
    public init() {
        self.handle = .default
    }

    private func emit(_ message: OSLogMessage, _ type: OSLogType) {
        guard handle.enabled else { return }
        handle.write(message.rendered(), type: type)
    }

    /// Writes `message` at the default type (`notice`).
    public func log(_ message: OSLogMessage) { emit(message, .default) }

    /// Writes `message` at `level`.
    public func log(level: OSLogType, _ message: OSLogMessage) { emit(message, level) }

    /// Debug type.
    public func trace(_ message: OSLogMessage) { emit(message, .debug) }
    /// Debug type.
    public func debug(_ message: OSLogMessage) { emit(message, .debug) }
    /// Info type.
    public func info(_ message: OSLogMessage) { emit(message, .info) }
    /// Default type.
    public func notice(_ message: OSLogMessage) { emit(message, .default) }
    /// Error type.
    public func warning(_ message: OSLogMessage) { emit(message, .error) }
    /// Error type.
    public func error(_ message: OSLogMessage) { emit(message, .error) }
    /// Fault type.
    public func critical(_ message: OSLogMessage) { emit(message, .fault) }
    /// Fault type.
    public func fault(_ message: OSLogMessage) { emit(message, .fault) }
}
