import AppStoreModels
import Foundation
import Synchronization

/// The backend's "now", against which subscriptions expire.
///
/// Apple's App Store lives in real time, so a backend of Apple's data reads the machine's clock
/// (``Source/system``). A local store's clock may run fast, jump a year or stand still (`make run`'s
/// is manual): a backend of its data follows the App Store's own time (``Source/appStore``), the
/// latest it has seen in what the store signed (every notification and transaction carries its
/// `signedDate`) and in the `Date` the store states in its Server API answers, which each
/// reconciliation reads. Until it has seen any, it reads the machine's clock.
public final class BackendClock: Sendable {
    /// Where the time comes from.
    public enum Source: String, Sendable, CaseIterable {
        /// The machine's clock: Apple's stores.
        case system
        /// The App Store's time as its signed data and answers show it: a local store.
        case appStore = "app-store"
    }

    public let source: Source
    private let system: @Sendable () -> Date
    private let latest = Mutex<Date?>(nil)

    /// - Parameter system: The machine's clock (a test's clock, when it says so).
    public init(_ source: Source, system: @escaping @Sendable () -> Date = { Date() }) {
        self.source = source
        self.system = system
    }

    /// The source a backend of `environment`'s data follows unless told otherwise: the App Store's
    /// own time for the local environments (Xcode, local testing), which only local stores sign.
    public static func defaultSource(for environment: AppStoreModels.Environment) -> Source {
        environment == .xcode || environment == .localTesting ? .appStore : .system
    }

    /// Now, by the source.
    public func now() -> Date {
        switch source {
        case .system: return system()
        case .appStore: return latest.withLock { $0 } ?? system()
        }
    }

    /// The latest App Store time seen, whatever the source (`nil` before any).
    public var latestAppStoreTime: Date? { latest.withLock { $0 } }

    /// The App Store was seen at `date` (a signed date): the clock moves there when it is later than
    /// what was seen before. A signed date never moves it back: a notification retried late carries
    /// the date it was first signed with.
    public func observe(_ date: Date) {
        latest.withLock { if $0.map({ date > $0 }) ?? true { $0 = date } }
    }

    /// The App Store stated its present (the `Date` of a Server API answer): the clock takes it,
    /// earlier or later. This is how a backend follows a local store whose clock was moved back (a
    /// manual store served on the real clock): subscriptions expire by the App Store's time again.
    public func follow(statedNow date: Date) {
        latest.withLock { $0 = date }
    }
}
