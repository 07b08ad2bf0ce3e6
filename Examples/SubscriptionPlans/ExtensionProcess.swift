import Dispatch
import Foundation

/// The app's extension, started as a process of its own: `posix_spawn`, its output read from a pipe
/// and the process waited for on a dispatch queue of their own, while the app's task waits without
/// holding a thread.
enum ExtensionProcess {
    /// Runs `executable` with `arguments` and returns what it printed, trimmed.
    static func output(of executable: URL, _ arguments: [String]) async throws -> String {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw PlansError(message: "cannot make a pipe") }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
        var pid: pid_t = 0
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let spawned = posix_spawn(&pid, executable.path, &actions, nil, argv, environ)
        close(ends[1])
        guard spawned == 0 else {
            close(ends[0])
            throw PlansError(message: "cannot start \(executable.path)")
        }
        let (reader, child) = (ends[0], pid)
        let output = await withCheckedContinuation { (continuation: CheckedContinuation<Data, Never>) in
            DispatchQueue(label: "extension process").async {
                var output = Data()
                var chunk = [UInt8](repeating: 0, count: 4_096)
                while true {
                    let count = read(reader, &chunk, chunk.count)
                    if count < 0, errno == EINTR { continue }
                    guard count > 0 else { break }
                    output.append(contentsOf: chunk[0..<count])
                }
                close(reader)
                var status: Int32 = 0
                while waitpid(child, &status, 0) == -1 && errno == EINTR {}
                continuation.resume(returning: output)
            }
        }
        return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
