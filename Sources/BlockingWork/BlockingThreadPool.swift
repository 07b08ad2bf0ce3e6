import Foundation

/// The threads ``BlockingWork/run(_:_:)`` runs blocking calls on: at most ``maximumThreads``, made
/// when calls wait and none is idle, kept for the next ones. A call that comes while all of them
/// block waits its turn, so the process's thread count has a bound however many calls block at once.
final class BlockingThreadPool: @unchecked Sendable {
    // Unchecked: every field is read and written under `condition`.
    static let shared = BlockingThreadPool(maximumThreads: 128, name: "BlockingWork")

    let maximumThreads: Int
    /// The threads' name, with their number after it (the system keeps 15 characters of a thread's name).
    let name: String
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var next = 0
    private var threads = 0
    private var idle = 0

    init(maximumThreads: Int, name: String) {
        self.maximumThreads = maximumThreads
        self.name = name
    }

    /// Runs `job` on one of the pool's threads, as soon as one is free.
    func submit(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        // Idle threads that were signalled but have not woken yet still count as idle, so compare
        // the jobs waiting with the threads free to take them, not only whether any is idle.
        let spawns = jobs.count - next > idle && threads < maximumThreads
        if spawns { threads += 1 }
        let number = threads
        condition.signal()
        condition.unlock()
        if spawns {
            let name = "\(name) \(number)"
            // Named from inside: on Linux a name set before start does not reach the system's thread,
            // which keeps its creator's (a debugger's stacks then show "…root.default-qos").
            let thread = Thread { [self] in
                Thread.current.name = name
                work()
            }
            thread.start()
        }
    }

    /// How many threads the pool has made.
    var threadCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return threads
    }

    private func work() {
        while true {
            condition.lock()
            while next == jobs.count {
                idle += 1
                condition.wait()
                idle -= 1
            }
            let job = jobs[next]
            next += 1
            if next == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                next = 0
            }
            condition.unlock()
            job()
        }
    }
}
