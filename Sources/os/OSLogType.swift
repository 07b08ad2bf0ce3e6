@_exported import os
import ServiceLogging

/// How much a log message matters, as the unified log's `OSLogType` (`os_log_type_t`), with its raw
/// values.
public struct OSLogType: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Something that may be worth knowing when a problem is investigated (`notice`).
    public static let `default` = OSLogType(rawValue: 0x00)
    /// Helpful, but not essential.
    public static let info = OSLogType(rawValue: 0x01)
    /// Only of use while debugging.
    public static let debug = OSLogType(rawValue: 0x02)
    /// An error in the process.
    public static let error = OSLogType(rawValue: 0x10)
    /// A bug, or a failure that involves more than the process.
    public static let fault = OSLogType(rawValue: 0x11)

    /// The word the unified log prints for the type (`Default`, `Info`, `Debug`, `Error`, `Fault`).
    var name: String {
        switch self {
        case .info: return "Info"
        case .debug: return "Debug"
        case .error: return "Error"
        case .fault: return "Fault"
        default: return "Default"
        }
    }

    /// The project logger's level for the type.
    var level: ServiceLogging.Logger.Level {
        switch self {
        case .info: return .info
        case .debug: return .debug
        case .error: return .error
        case .fault: return .critical
        default: return .notice
        }
    }

    /// The type a record of the project logger's level stands for (the inverse of ``level``).
    init(level: ServiceLogging.Logger.Level) {
        switch level {
        case .trace, .debug: self = .debug
        case .info: self = .info
        case .notice: self = .default
        case .warning, .error: self = .error
        case .critical: self = .fault
        }
    }
}
