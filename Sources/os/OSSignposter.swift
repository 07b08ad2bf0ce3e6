import Foundation
import Synchronization

/// Identifies a signpost interval or event, as the unified log's `OSSignpostID`.
public struct OSSignpostID: Hashable, Comparable, Sendable {
    public let rawValue: UInt64

    public init(_ value: UInt64) { self.rawValue = value }

    /// A new identifier, unique in this process.
    public init(log: OSLog) { self.rawValue = Self.next() }

    /// The identifier of `object`: the same for the same object while it lives.
    public init(log: OSLog, object: AnyObject) { self.rawValue = UInt64(UInt(bitPattern: ObjectIdentifier(object).hashValue)) }

    /// For intervals that never overlap.
    public static let exclusive = OSSignpostID(0xEEEE_B0B5_B2B2_EEEE)
    public static let invalid = OSSignpostID(~0)
    public static let null = OSSignpostID(0)

    public static func < (lhs: OSSignpostID, rhs: OSSignpostID) -> Bool { lhs.rawValue < rhs.rawValue }

    private static let counter = Atomic<UInt64>(0)
    static func next() -> UInt64 { counter.wrappingAdd(1, ordering: .relaxed).newValue }
}

/// What kind of signpost `os_signpost` writes.
public struct OSSignpostType: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let event = OSSignpostType(rawValue: 0)
    public static let begin = OSSignpostType(rawValue: 1)
    public static let end = OSSignpostType(rawValue: 2)

    var name: String {
        switch self {
        case .begin: return "begin"
        case .end: return "end"
        default: return "event"
        }
    }
}

/// The message a signpost carries, as the unified log's `SignpostMetadata`.
public typealias SignpostMetadata = OSLogMessage

/// An interval begun with ``OSSignposter/beginInterval(_:id:)``, to end it with.
public final class OSSignpostIntervalState: Sendable {
    let id: OSSignpostID
    let name: String
    let start: ContinuousClock.Instant

    init(id: OSSignpostID, name: String) {
        self.id = id
        self.name = name
        self.start = .now
    }
}

/// Marks intervals and events for performance tools, as the unified log's `OSSignposter`. With no
/// Instruments on this platform, each signpost is a debug line of its log (an interval's end says
/// how long it took), so scripted runs still show what happened when.
public struct OSSignposter: @unchecked Sendable {
    let handle: OSLog

    public init(subsystem: String, category: String) { self.handle = OSLog(subsystem: subsystem, category: category) }
    public init(subsystem: String, category: OSLog.Category) { self.handle = OSLog(subsystem: subsystem, category: category) }
    public init(logger: Logger) { self.handle = logger.handle }
    public init(logHandle: OSLog) { self.handle = logHandle }
    public init() { self.handle = .default }

    /// A signposter that writes nothing.
    public static var disabled: OSSignposter { OSSignposter(logHandle: .disabled) }

    public var isEnabled: Bool { handle.signpostsEnabled }

    public func makeSignpostID() -> OSSignpostID { OSSignpostID(log: handle) }
    public func makeSignpostID(from object: AnyObject) -> OSSignpostID { OSSignpostID(log: handle, object: object) }

    public func emitEvent(_ name: StaticString, id: OSSignpostID = .exclusive, _ message: SignpostMetadata) {
        write(.event, name: "\(name)", id: id, message.rendered())
    }

    public func emitEvent(_ name: StaticString, id: OSSignpostID = .exclusive) {
        write(.event, name: "\(name)", id: id, "")
    }

    public func beginInterval(_ name: StaticString, id: OSSignpostID = .exclusive, _ message: SignpostMetadata) -> OSSignpostIntervalState {
        write(.begin, name: "\(name)", id: id, message.rendered())
        return OSSignpostIntervalState(id: id, name: "\(name)")
    }

    public func beginInterval(_ name: StaticString, id: OSSignpostID = .exclusive) -> OSSignpostIntervalState {
        write(.begin, name: "\(name)", id: id, "")
        return OSSignpostIntervalState(id: id, name: "\(name)")
    }

    /// An interval for an animation: the same as ``beginInterval(_:id:_:)`` here.
    public func beginAnimationInterval(_ name: StaticString, id: OSSignpostID = .exclusive, _ message: SignpostMetadata) -> OSSignpostIntervalState {
        beginInterval(name, id: id, message)
    }

    public func beginAnimationInterval(_ name: StaticString, id: OSSignpostID = .exclusive) -> OSSignpostIntervalState {
        beginInterval(name, id: id)
    }

    public func endInterval(_ name: StaticString, _ state: OSSignpostIntervalState, _ message: SignpostMetadata) {
        write(.end, name: "\(name)", id: state.id, Self.elapsed(since: state) + message.rendered())
    }

    public func endInterval(_ name: StaticString, _ state: OSSignpostIntervalState) {
        write(.end, name: "\(name)", id: state.id, Self.elapsed(since: state))
    }

    /// Runs `task` inside an interval named `name`.
    public func withIntervalSignpost<T>(_ name: StaticString, id: OSSignpostID = .exclusive, _ message: SignpostMetadata,
                                        around task: () throws -> T) rethrows -> T {
        let state = beginInterval(name, id: id, message)
        defer { endInterval(name, state) }
        return try task()
    }

    public func withIntervalSignpost<T>(_ name: StaticString, id: OSSignpostID = .exclusive, around task: () throws -> T) rethrows -> T {
        let state = beginInterval(name, id: id)
        defer { endInterval(name, state) }
        return try task()
    }

    private static func elapsed(since state: OSSignpostIntervalState) -> String {
        let duration = ContinuousClock.now - state.start
        let (seconds, attoseconds) = duration.components
        return String(format: "(%.3f ms) ", Double(seconds) * 1_000 + Double(attoseconds) / 1e15)
    }

    func write(_ type: OSSignpostType, name: String, id: OSSignpostID, _ message: String) {
        guard handle.signpostsEnabled else { return }
        let identifier = id == .exclusive ? "exclusive" : "0x" + String(id.rawValue, radix: 16)
        handle.write("[spid \(identifier), \(type.name)] \(name) \(message)".trimmingCharacters(in: .whitespaces), type: .debug)
    }
}

/// Writes a signpost to `log`, as `os_signpost`.
public func os_signpost(_ type: OSSignpostType, dso: UnsafeRawPointer = #dsohandle, log: OSLog, name: StaticString,
                        signpostID: OSSignpostID = .exclusive) {
    OSSignposter(logHandle: log).write(type, name: "\(name)", id: signpostID, "")
}

/// Writes a signpost with a `printf`-style message to `log`, as `os_signpost`.
public func os_signpost(_ type: OSSignpostType, dso: UnsafeRawPointer = #dsohandle, log: OSLog, name: StaticString,
                        signpostID: OSSignpostID = .exclusive, _ format: StaticString, _ arguments: any CVarArg...) {
    OSSignposter(logHandle: log).write(type, name: "\(name)", id: signpostID, PrintfMessage.render(format.description, arguments))
}
