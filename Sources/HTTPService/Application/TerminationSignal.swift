import Dispatch
import Foundation
import Synchronization

/// The signals that end a server process: SIGINT (Ctrl-C) and SIGTERM (`kill`, a supervisor).
public enum TerminationSignal {
    /// Waits, suspended, for the first SIGINT or SIGTERM and returns which came. From the first call
    /// on, the process no longer ends at those signals by itself: whoever waits stops what it runs.
    public static func next() async -> Int32 {
        await withCheckedContinuation { continuation in
            let once = FirstSignal(continuation)
            for number in [SIGINT, SIGTERM] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { once.resume(number) }
                source.resume()
                once.keep(source)
            }
        }
    }

    /// `SIGINT` or `SIGTERM`, as a log line names it.
    public static func name(_ number: Int32) -> String { number == SIGINT ? "SIGINT" : "SIGTERM" }
}

/// Resumes a continuation with the first signal that arrives, and keeps the signal sources alive.
private final class FirstSignal: Sendable {
    private struct State: @unchecked Sendable {
        // Unchecked: the sources are only kept (never used) and released with the state.
        var continuation: CheckedContinuation<Int32, Never>?
        var sources: [any DispatchSourceSignal] = []
    }

    private let state: Mutex<State>

    init(_ continuation: CheckedContinuation<Int32, Never>) {
        state = Mutex(State(continuation: continuation))
    }

    func keep(_ source: any DispatchSourceSignal) {
        state.withLock { $0.sources.append(source) }
    }

    func resume(_ number: Int32) {
        let pending = state.withLock { state -> CheckedContinuation<Int32, Never>? in
            defer { state.continuation = nil }
            return state.continuation
        }
        pending?.resume(returning: number)
    }
}
