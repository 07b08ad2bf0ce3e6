import BlockingWork
import Foundation

/// Runs another program to its end and collects its standard output, waiting for it off Swift's
/// cooperative pool (`posix_spawn`, a pipe read to its end, `waitpid`).
///
/// Not Foundation's `Process`: on Linux with Swift 6.3 its `run()` over-reads `/proc/self/fd` and can
/// crash a busy process (swift-corelibs-foundation #5472).
enum ChildProgram {
    struct Outcome: Sendable {
        /// The exit code, or 128 + the signal that ended the program.
        var status: Int32
        var standardOutput: Data
    }

    /// Runs `executable` with `arguments`; standard error goes where this process's goes.
    static func run(_ executable: String, _ arguments: [String]) async throws(CommandFailure) -> Outcome {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw CommandFailure("cannot make a pipe: \(String(cString: strerror(errno)))") }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
        var pid: pid_t = 0
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let spawned = posix_spawnp(&pid, executable, &actions, nil, argv, environ)
        close(ends[1])
        guard spawned == 0 else {
            close(ends[0])
            throw CommandFailure("cannot start \(executable): \(String(cString: strerror(spawned)))")
        }
        let reader = ends[0]
        let child = pid
        let (status, output) = await BlockingWork.run("ChildProgram \(executable)") { () -> (Int32, Data) in
            var output = Data()
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = read(reader, &chunk, chunk.count)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                output.append(contentsOf: chunk[0..<count])
            }
            close(reader)
            var status: Int32 = 0
            while waitpid(child, &status, 0) == -1 && errno == EINTR {}
            return (status, output)
        }
        let code = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return Outcome(status: code, standardOutput: output)
    }
}
