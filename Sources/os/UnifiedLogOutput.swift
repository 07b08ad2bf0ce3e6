import Foundation
import ServiceLogging
import Synchronization

/// Where `Logger`, `os_log` and `OSSignposter` write on this platform, which has no unified log: the
/// project's logger (`ServiceLogging`). By default each record is one line on standard error in the
/// unified log's default style, as `log stream` prints it:
///
/// ```
/// 2026-12-05 08:14:00.123456+0000 0x1a2b       Error       0x0          4242   0    Shop: [com.example.shop:Store] purchase failed
/// ```
///
/// Tests and tools replace ``handler`` (a `RecordingLogHandler` keeps every record: its label is
/// `subsystem:category`, its level the type's, and its metadata `subsystem`, `category` and `type`).
public enum UnifiedLogOutput {
    private struct Settings {
        var handler: any LogHandler = UnifiedLogLineHandler()
        var revealsPrivateValues = false
    }

    private static let settings = Mutex(Settings())

    /// Where records go.
    public static var handler: any LogHandler {
        get { settings.withLock { $0.handler } }
        set { settings.withLock { $0.handler = newValue } }
    }

    /// Whether values logged as private or sensitive are written as they are; by default they are
    /// written `<private>`, as the unified log keeps them unless private data is enabled. Values
    /// logged with `privacy: .private(mask: .hash)` are written as their hash either way.
    public static var revealsPrivateValues: Bool {
        get { settings.withLock { $0.revealsPrivateValues } }
        set { settings.withLock { $0.revealsPrivateValues = newValue } }
    }

    /// Writes one message of `log` at `type`.
    static func write(_ message: String, type: OSLogType, subsystem: String, category: String) {
        let record = LogRecord(label: subsystem.isEmpty ? category : "\(subsystem):\(category)", level: type.level, message: message,
                               metadata: ["subsystem": subsystem, "category": category, "type": type.name])
        handler.write(record)
    }
}

/// Writes each record as a line in the unified log's default style to standard error (or another
/// file): time with microseconds and the zone's offset, thread, type, activity, process id, TTL,
/// process name, `[subsystem:category]` and the message, its line breaks escaped so a record stays
/// one line.
public final class UnifiedLogLineHandler: LogHandler {
    private let output: FileHandle
    private let lock = Mutex(())

    public init(output: FileHandle = .standardError) {
        self.output = output
    }

    public func write(_ record: LogRecord) {
        let line = Self.line(record, time: Date(), thread: Self.currentThreadID, process: ProcessInfo.processInfo)
        lock.withLock { _ in try? output.write(contentsOf: Data((line + "\n").utf8)) }
    }

    /// One record as a line, without the line break: `thread` is the writing thread's id.
    public static func line(_ record: LogRecord, time: Date, thread: UInt64, process: ProcessInfo) -> String {
        let type = record.metadata["type"] ?? OSLogType(level: record.level).name
        let subsystem = record.metadata["subsystem"] ?? ""
        let category = record.metadata["category"] ?? record.label
        let scope = subsystem.isEmpty && category.isEmpty ? "" : "[\(subsystem):\(category)] "
        let columns = [
            timestamp(time),
            padded("0x" + String(thread, radix: 16), 12),
            padded(type, 11),
            padded("0x0", 12),
            padded(String(process.processIdentifier), 6),
            padded("0", 4),
        ]
        return columns.joined(separator: " ") + " \(process.processName): \(scope)\(oneLine(record.message))"
    }

    private static func padded(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    /// `2026-12-05 08:14:00.123456+0000`, in the process's time zone.
    private static func timestamp(_ time: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone.current
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: time)
        let micros = Int((time.timeIntervalSince1970 * 1_000_000).rounded(.down)) % 1_000_000
        let offset = calendar.timeZone.secondsFromGMT(for: time)
        func two(_ value: Int?) -> String { String(format: "%02d", value ?? 0) }
        let sign = offset < 0 ? "-" : "+"
        return "\(String(format: "%04d", parts.year ?? 0))-\(two(parts.month))-\(two(parts.day)) \(two(parts.hour)):\(two(parts.minute)):\(two(parts.second))"
            + ".\(String(format: "%06d", micros))\(sign)\(two(abs(offset) / 3600))\(two(abs(offset) % 3600 / 60))"
    }

    /// Line breaks and other controls escaped, so one record is one line.
    private static func oneLine(_ message: String) -> String {
        guard message.unicodeScalars.contains(where: UntrustedText.needsEscaping) else { return message }
        return UntrustedText.excerpt(message, limit: Int.max)
    }

    private static var currentThreadID: UInt64 { UInt64(_os_log_current_thread_id()) }
}
