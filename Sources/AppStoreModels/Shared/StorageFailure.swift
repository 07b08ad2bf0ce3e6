/// Why a store's data could not be read or written: nothing was changed.
///
/// The reason is what callers choose an answer by (an HTTP status, an exit code, whether to try again);
/// the message says what was being done and where, for people. The failure underneath (the database's
/// own error, with its engine and code) travels with it, unchanged, for callers that need more.
public struct StorageFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure it is.
    public enum Reason: String, Hashable, Sendable, Codable, CaseIterable {
        /// The database server is not there for now (down, restarting, out of connection slots):
        /// trying again later may work.
        case unavailable
        /// The disk, or the user's quota, is full: writes work again once there is room.
        case full
        /// The store cannot be written by this user (a read-only filesystem, missing permission, a
        /// read-only database role).
        case readOnly
        /// The stored data is damaged, or is not a store's.
        case damaged
        /// Anything else: the store is not where it was looked for, cannot be set up as asked, or failed
        /// in a way the reason does not name.
        case failed
    }

    public var reason: Reason
    /// What was being done and where, and what went wrong.
    public var message: String
    /// The failure underneath, unchanged (a database's error, with its engine and code), when there is one.
    public var underlying: (any Error & Sendable)?

    public init(_ reason: Reason, _ message: String, underlying: (any Error & Sendable)? = nil) {
        self.reason = reason
        self.message = message
        self.underlying = underlying
    }

    /// A failure the reason does not name.
    public static func failed(_ message: String, underlying: (any Error & Sendable)? = nil) -> StorageFailure {
        StorageFailure(.failed, message, underlying: underlying)
    }

    /// Stored data that is damaged or not a store's.
    public static func damaged(_ message: String, underlying: (any Error & Sendable)? = nil) -> StorageFailure {
        StorageFailure(.damaged, message, underlying: underlying)
    }

    public var description: String { message }

    public static func == (lhs: StorageFailure, rhs: StorageFailure) -> Bool { lhs.reason == rhs.reason && lhs.message == rhs.message }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(reason)
        hasher.combine(message)
    }
}
