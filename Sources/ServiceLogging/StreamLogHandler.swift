import Foundation
import Synchronization

/// Writes each record as one line to standard error (or another file descriptor): text for people,
/// or JSON for log collectors.
///
/// Text: `2026-12-03T08:30:55.123Z error storekit.serve: storage failed path=/v1/… request_id=…`.
/// JSON: `{"label":…,"level":"error","message":…,"request_id":…,"time":…}`, keys sorted.
///
/// A record is one line whatever it holds: every control character, C1 code and Unicode line or
/// paragraph separator in a message or value is escaped (`\n`, `\u{2028}`), so nothing a client
/// sends can forge a second line; and values longer than ``maximumValueLength`` are cut, saying how
/// much was left out.
public final class StreamLogHandler: LogHandler {
    /// How records are written.
    public enum Format: String, Sendable, CaseIterable {
        case text, json
    }

    /// How many characters of one message or value are written at most.
    public static let maximumValueLength = 512

    public let format: Format
    private let output: FileHandle
    /// Keeps lines whole when several threads write at once.
    private let lock = Mutex(())
    /// The time each line is stamped with (the real time: a log says when something happened).
    private let now: @Sendable () -> Date

    public init(format: Format = .text, output: FileHandle = .standardError, now: @escaping @Sendable () -> Date = { Date() }) {
        self.format = format
        self.output = output
        self.now = now
    }

    public func write(_ record: LogRecord) {
        let line = Data((Self.line(record, format: format, time: now()) + "\n").utf8)
        // A log that cannot be written (a closed descriptor) must not stop the server.
        lock.withLock { _ in try? output.write(contentsOf: line) }
    }

    /// One record as a line, without the line break.
    public static func line(_ record: LogRecord, format: Format, time: Date) -> String {
        let stamp = time.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        switch format {
        case .text:
            var line = "\(stamp) \(record.level.rawValue) \(escaped(record.label)): \(escaped(record.message))"
            for (key, value) in record.metadata.sorted(by: { $0.key < $1.key }) {
                line += " \(escaped(key))=\(escaped(value))"
            }
            return line
        case .json:
            var fields = record.metadata.mapValues { cut($0) }
            fields["time"] = stamp
            fields["level"] = record.level.rawValue
            fields["label"] = cut(record.label)
            fields["message"] = cut(record.message)
            let data = (try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
            return escapeLineSeparators(String(decoding: data, as: UTF8.self))
        }
    }

    /// `text` with every control character, C1 code and line or paragraph separator escaped, and cut
    /// to ``maximumValueLength``.
    public static func escaped(_ text: String) -> String {
        UntrustedText.excerpt(text, limit: maximumValueLength)
    }

    static func needsEscaping(_ scalar: Unicode.Scalar) -> Bool { UntrustedText.needsEscaping(scalar) }

    /// `text` cut to ``maximumValueLength`` characters, saying how many were left out (for JSON, which
    /// escapes by itself).
    static func cut(_ text: String) -> String {
        guard text.count > maximumValueLength else { return text }
        return String(text.prefix(maximumValueLength)) + "…(\(text.count - maximumValueLength) more)"
    }

    /// JSON keeps C0 controls escaped by itself; U+2028 and U+2029 (and C1) it leaves as they are.
    private static func escapeLineSeparators(_ json: String) -> String {
        var result = ""
        for scalar in json.unicodeScalars {
            if needsEscaping(scalar) { result += String(format: "\\u%04x", scalar.value) } else { result.unicodeScalars.append(scalar) }
        }
        return result
    }
}

extension Logger.Level {
    /// The level a `--log-level` value names.
    public init?(name: String) {
        self.init(rawValue: name.lowercased())
    }
}
