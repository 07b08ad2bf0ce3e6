import BlockingWork
import Foundation
import Synchronization

/// A child process started with `posix_spawn` and waited for with `waitpid`.
///
/// The tests start many processes from one busy test process. Foundation's `Process.run()` on Linux
/// (Swift 6.3) over-reads `/proc/self/fd` entries and can crash a process with many descriptors open
/// (swift-corelibs-foundation #5472), and it waits for descriptors a daemon it started may keep open.
/// This spawns directly, with the child's descriptors named explicitly and nothing else inherited
/// but what the system marks to keep.
public final class Subprocess: @unchecked Sendable {
    /// Where a standard stream of the child goes.
    public enum Stream: Sendable {
        case null
        /// A file, created or truncated.
        case file(String)
        /// A pipe the parent reads (standard output only; see ``readLine()`` and ``readAvailable()``).
        case pipe
        /// Standard error only: wherever standard output goes.
        case sameAsOutput
    }

    public let pid: pid_t
    /// Whether the child leads a process group of its own (``signalGroup(_:)`` reaches its children too).
    public let leadsGroup: Bool
    /// The read end of the output pipe, when standard output is ``Stream/pipe``.
    private let pipe: Int32?
    private let state = Mutex<(status: Int32?, buffer: Data)>((nil, Data()))

    /// Starts `executable` with `arguments`, in the parent's environment with `environment` laid over it;
    /// with `newProcessGroup`, as the leader of a process group of its own (a script and what it starts).
    public init(_ executable: URL, _ arguments: [String], output: Stream = .null, error: Stream = .null,
                environment: [String: String] = [:], newProcessGroup: Bool = false) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        var ends: [Int32] = [-1, -1]
        switch output {
        case .null, .sameAsOutput: posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        case .file(let path): posix_spawn_file_actions_addopen(&actions, 1, path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        case .pipe:
            guard Glibc.pipe(&ends) == 0 else { throw TestFailure("cannot make a pipe: \(String(cString: strerror(errno)))") }
            // Neither end may leak into other children started meanwhile (a leaked write end keeps the pipe open).
            for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
        }
        switch error {
        case .null, .pipe: posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        case .file(let path): posix_spawn_file_actions_addopen(&actions, 2, path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        case .sameAsOutput: posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        var pid: pid_t = 0
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let variables = ProcessInfo.processInfo.environment.merging(environment) { $1 }.map { "\($0.key)=\($0.value)" }
        let envp = variables.map { strdup($0) } + [nil]
        defer { for pointer in envp { free(pointer) } }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        if newProcessGroup {
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
            posix_spawnattr_setpgroup(&attributes, 0)
        }
        let status = posix_spawn(&pid, executable.path, &actions, &attributes, argv, envp)
        if ends[1] >= 0 { close(ends[1]) }
        guard status == 0 else {
            if ends[0] >= 0 { close(ends[0]) }
            throw TestFailure("cannot start \(executable.path): \(String(cString: strerror(status)))")
        }
        self.pid = pid
        leadsGroup = newProcessGroup
        pipe = ends[0] >= 0 ? ends[0] : nil
    }

    /// A child still running when the last reference goes is killed, and reaped on a thread of its own.
    deinit {
        if leadsGroup { kill(-pid, SIGKILL) }
        if isRunning {
            kill(pid, SIGKILL)
            let pid = self.pid
            Thread.detachNewThread {
                var status: Int32 = 0
                while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
            }
        }
        if let pipe { close(pipe) }
    }

    /// Sends a signal.
    public func signal(_ signal: Int32) { kill(pid, signal) }

    /// Sends a signal to the child's whole process group (only for a child started with `newProcessGroup`).
    public func signalGroup(_ signal: Int32) {
        precondition(leadsGroup, "signalGroup needs a child started with newProcessGroup")
        kill(-pid, signal)
    }

    /// Whether the child has not ended yet (it is reaped when it has).
    public var isRunning: Bool {
        state.withLock { state in
            guard state.status == nil else { return false }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid { state.status = status }
            return state.status == nil
        }
    }

    /// How a child ended.
    public struct Termination: Sendable, CustomStringConvertible {
        /// The raw wait status.
        public let status: Int32
        /// The exit code, or 128 + the signal for a child a signal ended.
        public var exitCode: Int32 { status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F) }
        /// Whether a signal ended the child.
        public var wasSignaled: Bool { status & 0x7F != 0 && status & 0x7F != 0x7F }
        public var description: String { wasSignaled ? "signal \(status & 0x7F)" : "exit \(exitCode)" }
    }

    /// Waits for the child to end, on a thread of its own (never one of the cooperative pool).
    public func termination() async -> Termination {
        if let status = state.withLock({ $0.status }) { return Termination(status: status) }
        return await BlockingWork.run("Subprocess.wait") { self.waitBlocking() }
    }

    /// Waits for the child to end on this thread: for code already on a thread of its own.
    public func waitBlocking() -> Termination {
        if let status = state.withLock({ $0.status }) { return Termination(status: status) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        return Termination(status: state.withLock { state in
            if state.status == nil { state.status = status }
            return state.status!
        })
    }

    /// The next line of the output pipe, waiting for it on a thread of its own; `nil` at the end of
    /// the output.
    public func readLine() async -> String? {
        guard pipe != nil else { return nil }
        return await BlockingWork.run("Subprocess.readLine") { self.readLineBlocking() }
    }

    /// Everything left in the output pipe, read to its end (the child closes it when it ends).
    public func readToEnd() async -> Data {
        await BlockingWork.run("Subprocess.readToEnd") { self.readToEndBlocking() }
    }

    /// Everything left in the output pipe, read on this thread: for code already on a thread of its own.
    public func readToEndBlocking() -> Data {
        var data = Data()
        while let line = readLineBlocking() { data.append(Data((line + "\n").utf8)) }
        return data
    }

    private func readLineBlocking() -> String? {
        guard let pipe else { return nil }
        while true {
            let line = state.withLock { state -> String? in
                guard let newline = state.buffer.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
                let line = String(decoding: state.buffer[state.buffer.startIndex..<newline], as: UTF8.self)
                state.buffer.removeSubrange(state.buffer.startIndex...newline)
                return line
            }
            if let line { return line }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = read(pipe, &chunk, chunk.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                return state.withLock { state in
                    defer { state.buffer = Data() }
                    return state.buffer.isEmpty ? nil : String(decoding: state.buffer, as: UTF8.self)
                }
            }
            state.withLock { $0.buffer.append(contentsOf: chunk[0..<count]) }
        }
    }
}
