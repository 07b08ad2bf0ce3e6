import Foundation

/// A flag that one holder at a time takes and releases, for code that runs on a thread of its own
/// (a store's serial executor): a holder that must wait sleeps on its thread until the flag is released.
///
/// Never take it with `waiting: true` on Swift's cooperative pool: the wait blocks the thread.
public final class BlockingFlag: @unchecked Sendable {
    // Unchecked: `held` is read and written only while `condition` is locked.
    private let condition = NSCondition()
    private var held = false

    public init() {}

    /// Takes the flag; when it is held, returns `false`, or (with `waiting`) sleeps until it is
    /// released and then takes it.
    public func take(waiting: Bool) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while held {
            guard waiting else { return false }
            condition.wait()
        }
        held = true
        return true
    }

    /// Releases the flag and wakes one holder waiting for it.
    public func release() {
        condition.lock()
        held = false
        condition.signal()
        condition.unlock()
    }
}

/// The process's standard input, read to its end on a thread of the blocking pool.
public enum StandardInput {
    /// Everything the process's standard input holds until its end (a pipe's writer may take its
    /// time); the calling task is suspended meanwhile, never a thread of the cooperative pool.
    public static func readToEnd() async -> Data {
        await BlockingWork.run("StandardInput.readToEnd") { FileHandle.standardInput.readDataToEndOfFile() }
    }
}
