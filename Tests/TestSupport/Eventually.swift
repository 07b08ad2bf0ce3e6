/// Waits until `condition` holds, for at most 10 seconds, checking every 10 ms.
///
/// For effects that happen on their own: a store's listener task, a delegate callback, an update from
/// another device. Throws a failure naming `what` when the condition never holds.
@MainActor
public func eventually(_ what: String, _ condition: @MainActor () async -> Bool) async throws {
    for _ in 0..<1000 {
        if await condition() { return }
        try await Task.sleep(for: .milliseconds(10))
    }
    throw TestFailure("\(what) did not happen within 10 s")
}
