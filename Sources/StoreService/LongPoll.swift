/// Long polls: a request that waits for something to happen, up to a deadline.
enum LongPoll {
    /// Runs `event` until it returns or `deadline` passes, whichever comes first; `event` is cancelled
    /// at the deadline and when the request's task is (a server that stops cancels its handlers).
    static func wait(until deadline: ContinuousClock.Instant, for event: @escaping @Sendable () async -> Void) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await event() }
            group.addTask { try? await Task.sleep(until: deadline, clock: .continuous) }
            await group.next()
            group.cancelAll()
        }
    }
}
