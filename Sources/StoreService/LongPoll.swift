import Synchronization

/// Long polls: a request that waits for something to happen, up to a deadline.
enum LongPoll {
    /// Waits for `event` to return, for `deadline` to pass, or for the calling task to be cancelled (a
    /// server that stops cancels its handlers), whichever comes first; `event` is then cancelled.
    ///
    /// The wait ends at once on cancellation or at the deadline even when `event` cannot end yet (it
    /// waits on a store whose executor is busy with another process's lock): `event` finishes on its
    /// own afterwards, and nothing waits for it.
    static func wait(until deadline: ContinuousClock.Instant, for event: @escaping @Sendable () async -> Void) async {
        let ended = WaitEnd()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let waiting = Task {
                    await event()
                    ended.finish()
                }
                let timer = Task {
                    try? await Task.sleep(until: deadline, clock: .continuous)
                    ended.finish()
                }
                ended.start(continuation, cancelling: [waiting, timer])
            }
        } onCancel: {
            ended.finish()
        }
    }

    /// The end of one wait: the first of the event, the deadline and cancellation resumes the waiter
    /// and cancels the rest.
    private final class WaitEnd: Sendable {
        private let state = Mutex<(continuation: CheckedContinuation<Void, Never>?, tasks: [Task<Void, Never>], finished: Bool)>((nil, [], false))

        func start(_ continuation: CheckedContinuation<Void, Never>, cancelling tasks: [Task<Void, Never>]) {
            let finishedAlready = state.withLock { state -> Bool in
                guard !state.finished else { return true }
                state.continuation = continuation
                state.tasks = tasks
                return false
            }
            if finishedAlready {
                for task in tasks { task.cancel() }
                continuation.resume()
            }
        }

        func finish() {
            let (continuation, tasks) = state.withLock { state -> (CheckedContinuation<Void, Never>?, [Task<Void, Never>]) in
                guard !state.finished else { return (nil, []) }
                state.finished = true
                defer { state.continuation = nil; state.tasks = [] }
                return (state.continuation, state.tasks)
            }
            for task in tasks { task.cancel() }
            continuation?.resume()
        }
    }
}
