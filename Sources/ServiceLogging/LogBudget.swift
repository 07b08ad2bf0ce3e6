import Synchronization

/// How many lines one client may cause in a log: so many per window, the rest counted and reported
/// with the next line written, so a client sending refused requests as fast as it can costs a few
/// lines a second, not megabytes.
///
/// Keyed by whatever names a client (its address). Windows run on the monotonic clock: a budget
/// is about the machine's disk, not about the store's simulated time.
public final class LogBudget: Sendable {
    /// Lines one client may cause per window.
    public let linesPerWindow: Int
    public let window: Duration
    private let clients = Mutex<[String: Spending]>([:])

    private struct Spending {
        var windowStart: ContinuousClock.Instant
        var written = 0
        var dropped = 0
    }

    public init(linesPerWindow: Int = 20, window: Duration = .seconds(10)) {
        self.linesPerWindow = linesPerWindow
        self.window = window
    }

    /// Whether a line `client` causes is written: `nil` to drop it, else how many of its lines were
    /// dropped since the last one written (for the line to say so).
    public func admit(_ client: String, at now: ContinuousClock.Instant = .now) -> Int? {
        clients.withLock { clients in
            if clients.count > 4_096 { clients = clients.filter { now - $0.value.windowStart < window } }
            var spending = clients[client] ?? Spending(windowStart: now)
            if now - spending.windowStart >= window {
                spending.windowStart = now
                spending.written = 0
            }
            guard spending.written < linesPerWindow else {
                spending.dropped += 1
                clients[client] = spending
                return nil
            }
            let dropped = spending.dropped
            spending.written += 1
            spending.dropped = 0
            clients[client] = spending
            return dropped
        }
    }
}
