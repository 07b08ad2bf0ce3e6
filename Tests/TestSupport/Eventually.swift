/// Waits until `condition` holds, looking every 10 ms, and fails naming `what` if it has not held by
/// the deadline.
///
/// For effects that happen on their own with no event to wait for: a listener task's count, a
/// delegate callback, a row another process writes. The deadline is there for a test that is broken,
/// not as a timing: a healthy wait ends when the condition first holds, so it is generous (a loaded
/// two-core machine runs the whole suite beside it). The condition runs in the caller's isolation.
public func eventually(_ what: String, within limit: Duration = .seconds(120), isolation: isolated (any Actor)? = #isolation,
                       _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + limit
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw TestFailure("\(what) did not happen within \(limit)") }
        try await Task.sleep(for: .milliseconds(10))
    }
}

/// Waits until `value` gives something (not `nil`), looking every 10 ms, and returns it; fails naming
/// `what` if nothing came by the deadline.
public func eventually<Value>(orNil what: String, within limit: Duration = .seconds(120), isolation: isolated (any Actor)? = #isolation,
                              _ value: () async throws -> Value?) async throws -> Value {
    let deadline = ContinuousClock.now + limit
    while true {
        if let found = try await value() { return found }
        guard ContinuousClock.now < deadline else { throw TestFailure("\(what) did not come within \(limit)") }
        try await Task.sleep(for: .milliseconds(10))
    }
}
