import BlockingWork
import Foundation
import StoreKitCommands

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
        let (pid, reader) = try spawn(executable, arguments)
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

    /// Starts `executable` with standard input from `/dev/null` and standard output into a pipe (its
    /// read end is returned); standard error goes to the file `standardError` (appended to), or
    /// where this process's goes.
    static func spawn(_ executable: String, _ arguments: [String], standardError: String? = nil) throws(CommandFailure) -> (pid: pid_t, output: Int32) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw CommandFailure("cannot make a pipe: \(String(cString: strerror(errno)))") }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
        if let standardError { posix_spawn_file_actions_addopen(&actions, 2, standardError, O_WRONLY | O_CREAT | O_APPEND, 0o644) }
        var pid: pid_t = 0
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let spawned = posix_spawnp(&pid, executable, &actions, nil, argv, environ)
        close(ends[1])
        guard spawned == 0 else {
            close(ends[0])
            throw CommandFailure("cannot start \(executable): \(String(cString: strerror(spawned)))")
        }
        return (pid, ends[0])
    }
}

/// A program left running beside this one (a server the benchmarks start): its first line of
/// standard output is read off the pool, the rest is drained until it ends, and ``stop()`` ends it
/// with SIGTERM and waits for it off the pool.
final class RunningChild: Sendable {
    let pid: pid_t
    let executable: String
    private let output: Int32

    private init(pid: pid_t, executable: String, output: Int32) {
        self.pid = pid
        self.executable = executable
        self.output = output
    }

    /// Starts `executable` with `arguments`; standard error goes to the file `standardError` (appended
    /// to), or where this process's goes.
    static func start(_ executable: String, _ arguments: [String], standardError: String? = nil) throws(CommandFailure) -> RunningChild {
        let (pid, output) = try ChildProgram.spawn(executable, arguments, standardError: standardError)
        return RunningChild(pid: pid, executable: executable, output: output)
    }

    /// The first line the program prints (such as `listening on URL`); afterwards its output is
    /// drained in the background. Fails when the program ends without printing one.
    func firstLine() async throws(CommandFailure) -> String {
        let reader = output
        let line = await BlockingWork.run("RunningChild \(executable)") { () -> String? in
            var bytes: [UInt8] = []
            var byte: UInt8 = 0
            while true {
                let count = read(reader, &byte, 1)
                if count < 0, errno == EINTR { continue }
                guard count == 1 else { return nil }
                if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
                bytes.append(byte)
            }
        }
        guard let line else { throw CommandFailure("\(executable) ended before printing a line") }
        Task.detached { [reader] in
            await BlockingWork.run("RunningChild drain") {
                var chunk = [UInt8](repeating: 0, count: 4_096)
                while true {
                    let count = read(reader, &chunk, chunk.count)
                    if count < 0, errno == EINTR { continue }
                    if count <= 0 { break }
                }
                close(reader)
            }
        }
        return line
    }

    /// Its peak resident set so far, in megabytes (`VmHWM`).
    var peakResidentMegabytes: Double { ProcessMemory.peakResidentMegabytes(process: String(pid)) }

    /// Ends it with SIGTERM and waits for it; answers its exit code (128 + signal when killed).
    @discardableResult
    func stop() async -> Int32 {
        kill(pid, SIGTERM)
        let child = pid
        let status = await BlockingWork.run("RunningChild wait") { () -> Int32 in
            var status: Int32 = 0
            while waitpid(child, &status, 0) == -1 && errno == EINTR {}
            return status
        }
        return status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }
}

/// What a process holds in memory and has used of the CPU, from `/proc`.
enum ProcessMemory {
    /// CPU seconds a process has used (user and system), from `/proc/PID/stat`.
    static func cpuSeconds(process: String = "self") -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(process)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// A process's peak resident set so far (`VmHWM`), in megabytes; `process` is a pid or `self`.
    static func peakResidentMegabytes(process: String = "self") -> Double {
        guard let status = try? String(contentsOfFile: "/proc/\(process)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kilobytes / 1024
    }
}

/// The whole machine's CPU time so far, from the first line of `/proc/stat`, in clock ticks: what was
/// busy, idle (waiting for I/O included), and stolen (a virtual machine's cores that were ready to run
/// while the host ran something else). Differences of two readings say how a stretch went.
struct MachineCPU: Sendable {
    var busy = 0.0
    var idle = 0.0
    var steal = 0.0

    static func now() -> MachineCPU {
        guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
              let line = stat.split(separator: "\n").first, line.hasPrefix("cpu ") else { return MachineCPU() }
        // user nice system idle iowait irq softirq steal (guest time is counted in user already)
        let ticks = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard ticks.count >= 8 else { return MachineCPU() }
        return MachineCPU(busy: ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6], idle: ticks[3] + ticks[4], steal: ticks[7])
    }

    static func - (after: MachineCPU, before: MachineCPU) -> MachineCPU {
        MachineCPU(busy: after.busy - before.busy, idle: after.idle - before.idle, steal: after.steal - before.steal)
    }

    static func + (one: MachineCPU, other: MachineCPU) -> MachineCPU {
        MachineCPU(busy: one.busy + other.busy, idle: one.idle + other.idle, steal: one.steal + other.steal)
    }

    private var total: Double { busy + idle + steal }
    /// The share of the stretch the cores sat idle, in percent.
    var idlePercent: Double { total > 0 ? idle / total * 100 : 0 }
    /// The share of the stretch the host took from this machine, in percent.
    var stealPercent: Double { total > 0 ? steal / total * 100 : 0 }
    /// The share of the cores' time this machine really had: 1 less what was stolen.
    var availableFraction: Double { total > 0 ? 1 - steal / total : 1 }
}
