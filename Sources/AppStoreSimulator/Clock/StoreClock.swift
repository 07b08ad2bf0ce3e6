import Foundation
import Synchronization

/// Where the local App Store reads the time.
///
/// The engine never calls `Date()`: every timestamp it writes comes from its clock. Tests and the
/// command line use a ``ManualStoreClock`` that moves only when told; a running server uses a
/// ``SystemStoreClock``.
public protocol StoreClock: Sendable {
    /// The current time.
    func now() -> Date

    /// Whether subscription periods, grace periods and billing retry follow the store's time rate
    /// (`_timeRate`, `SKTestSession.timeRate`), as they do when time runs by itself; otherwise they
    /// have their calendar lengths. Clocks that run follow it unless they say otherwise.
    var followsTimeRate: Bool { get }
}

extension StoreClock {
    public var followsTimeRate: Bool { true }
}

/// A clock that stands still until advanced.
///
/// Advancing is done through the store (`SimulatedAppStore.advanceTime(by:)`), which moves the clock
/// and then plays every renewal, expiry and grace-period end that falls due, in order.
public final class ManualStoreClock: StoreClock {
    private let current: Mutex<Date>
    public let followsTimeRate: Bool

    /// A clock standing at `start`. Advancing it costs nothing, so periods keep their calendar
    /// lengths unless `followsTimeRate` says the clock stands in for real time that someone moves
    /// forward as it passes (a test session that runs in real time).
    public init(startingAt start: Date, followsTimeRate: Bool = false) {
        self.current = Mutex(start)
        self.followsTimeRate = followsTimeRate
    }

    public func now() -> Date {
        current.withLock { $0 }
    }

    /// Moves the clock to `date`; a date in the past is ignored, time never runs backwards.
    public func set(to date: Date) {
        current.withLock { if date > $0 { $0 = date } }
    }
}

/// The machine's wall clock, for stores that run in real time.
public struct SystemStoreClock: StoreClock {
    public init() {}

    public func now() -> Date {
        // The one place the engine meets real time; everything else asks its injected clock.
        Date()
    }
}

/// The span of time a store can represent: 1970 to the end of year 9999, the range its certificates,
/// its millisecond dates and Apple's payloads share. Anything outside is refused with a clear error.
public enum StoreTimeRange {
    public static let earliest = Date(timeIntervalSince1970: 0)
    public static let latest = Date(timeIntervalSince1970: 253_402_300_799)

    public static func contains(_ date: Date) -> Bool { date >= earliest && date <= latest }

    static func check(_ date: Date, _ what: String) throws(AppStoreError) {
        guard contains(date) else {
            throw .control(.invalidAction, "\(what) \(date.timeIntervalSince1970.isFinite ? date.formatted(.iso8601) : "?") is outside the store's time, 1970-01-01 to 9999-12-31")
        }
    }
}
