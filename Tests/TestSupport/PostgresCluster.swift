import Foundation

/// A throwaway PostgreSQL cluster for one test: `initdb` in a temporary folder, trust authentication,
/// reached through a Unix socket in that folder (no TCP port, so nothing to race other tests for),
/// stopped and removed at the end. Debian's server binaries (`scripts/bootstrap` installs
/// `postgresql`); as root, the server runs as the `postgres` user.
public final class PostgresCluster: Sendable {
    /// `postgres://postgres@/postgres?host=FOLDER`: libpq reaches the server through its socket.
    public let url: String
    private let directory: URL
    private let binaries: URL
    private let user: String?

    /// The folder of Debian's PostgreSQL server binaries, if installed.
    public static let binaries: URL? = {
        let root = URL(fileURLWithPath: "/usr/lib/postgresql")
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []).sorted { (Int($0) ?? 0) > (Int($1) ?? 0) }
        return versions.map { root.appendingPathComponent($0).appendingPathComponent("bin") }
            .first { FileManager.default.isExecutableFile(atPath: $0.appendingPathComponent("initdb").path) }
    }()

    public static var isAvailable: Bool { binaries != nil }
    public static let skipReason = "PostgreSQL's server is not installed (scripts/bootstrap installs Debian's postgresql)"

    /// Runs `body` with a new cluster, stopped and removed when `body` returns or throws.
    public static func with<Result>(_ body: (PostgresCluster) async throws -> Result) async throws -> Result {
        let cluster = try await start()
        do {
            let result = try await body(cluster)
            await cluster.stop()
            return result
        } catch {
            await cluster.stop()
            throw error
        }
    }

    /// Makes and starts a cluster; every program it runs is waited for off the cooperative pool.
    /// Stop it with ``stop()``.
    public static func start() async throws -> PostgresCluster {
        guard let binaries = Self.binaries else { throw TestFailure(Self.skipReason) }
        let user = getuid() == 0 ? "postgres" : nil
        await removeAbandoned(binaries: binaries, user: user)
        // The owner's process id in the name lets a later run stop what a crashed one left behind.
        let directory = URL(fileURLWithPath: "/tmp/openstorekit-pg-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if let user, await run("/bin/chown", ["-R", user, directory.path]).status != 0 { throw TestFailure("cannot give \(directory.path) to \(user)") }
        let cluster = PostgresCluster(binaries: binaries, directory: directory, user: user)
        let data = directory.appendingPathComponent("data").path
        try await cluster.tool("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"])
        try await cluster.tool("pg_ctl", ["-D", data, "-l", directory.appendingPathComponent("log").path, "-w", "-o",
                                          "-k \(directory.path) -c listen_addresses='' -c max_connections=50", "start"])
        return cluster
    }

    private init(binaries: URL, directory: URL, user: String?) {
        self.binaries = binaries
        self.directory = directory
        self.user = user
        url = "postgres://postgres@/postgres?host=\(directory.path)"
    }

    /// How many times the server's log says it refused a connection for want of a free slot
    /// (`sorry, too many clients already`).
    public func refusedForWantOfSlots() -> Int {
        let log = (try? String(contentsOf: directory.appendingPathComponent("log"), encoding: .utf8)) ?? ""
        return log.components(separatedBy: "too many clients").count - 1
    }

    /// Restarts the server (`fast` ends sessions cleanly, `immediate` as a crash would); every
    /// client's connection breaks.
    public func restart(mode: String = "fast") async throws {
        try await tool("pg_ctl", ["-D", directory.appendingPathComponent("data").path, "-l", directory.appendingPathComponent("log").path,
                                  "-m", mode, "-w", "restart"])
    }

    /// Stops the server (`fast` or `immediate`) and leaves it stopped until ``startAgain()``: every
    /// client's connection breaks, and new ones are refused.
    public func stopServer(mode: String = "fast") async throws {
        try await tool("pg_ctl", ["-D", directory.appendingPathComponent("data").path, "-m", mode, "-w", "stop"])
    }

    /// Starts the server stopped by ``stopServer(mode:)`` again, and waits until it takes connections.
    public func startAgain() async throws {
        try await tool("pg_ctl", ["-D", directory.appendingPathComponent("data").path, "-l", directory.appendingPathComponent("log").path, "-w", "-o",
                                  "-k \(directory.path) -c listen_addresses='' -c max_connections=50", "start"])
    }

    /// Stops the server at once and removes its folder.
    public func stop() async {
        _ = try? await tool("pg_ctl", ["-D", directory.appendingPathComponent("data").path, "-m", "immediate", "-w", "stop"])
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs a server tool (as `postgres` when root).
    private func tool(_ name: String, _ arguments: [String]) async throws {
        let (status, output) = await Self.run(tool: binaries.appendingPathComponent(name).path, arguments, user: user)
        guard status == 0 else { throw TestFailure("\(name) \(arguments.joined(separator: " ")) failed (\(status)): \(output)") }
    }

    private static func run(tool path: String, _ arguments: [String], user: String?) async -> (status: Int32, output: String) {
        let (executable, all) = user.map { ("/usr/sbin/runuser", ["-u", $0, "--", path] + arguments) } ?? (path, arguments)
        return await run(executable, all)
    }

    /// Runs a program to its end (a ``Subprocess``: `pg_ctl` leaves a server running that inherits its
    /// descriptors, which Foundation's `Process` would wait on for good).
    private static func run(_ executable: String, _ arguments: [String]) async -> (status: Int32, output: String) {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("pg-run-\(UUID().uuidString).log").path
        defer { unlink(log) }
        guard let child = try? Subprocess(URL(fileURLWithPath: executable), arguments, output: .file(log), error: .sameAsOutput) else {
            return (-1, "cannot start \(executable)")
        }
        let ended = await child.termination()
        return (ended.exitCode, (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
    }

    /// Stops and removes the clusters of test processes that ended without stopping theirs (a crash, a kill).
    private static func removeAbandoned(binaries: URL, user: String?) async {
        let root = URL(fileURLWithPath: "/tmp")
        for name in (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? [] where name.hasPrefix("openstorekit-pg-") {
            let parts = name.split(separator: "-")
            guard parts.count == 4, let owner = pid_t(parts[2]), kill(owner, 0) != 0, errno == ESRCH else { continue }
            let folder = root.appendingPathComponent(name)
            _ = await run(tool: binaries.appendingPathComponent("pg_ctl").path,
                          ["-D", folder.appendingPathComponent("data").path, "-m", "immediate", "-w", "stop"], user: user)
            try? FileManager.default.removeItem(at: folder)
        }
    }
}
