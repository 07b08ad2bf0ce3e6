import Foundation

/// A throwaway PostgreSQL cluster for one test: `initdb` in a temporary folder, a free port on
/// 127.0.0.1, trust authentication, stopped and removed when released. Debian's server binaries
/// (`scripts/bootstrap` installs `postgresql`); as root, the server runs as the `postgres` user.
public final class PostgresCluster: @unchecked Sendable {
    /// `postgres://postgres@127.0.0.1:PORT/postgres`.
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

    /// Makes and starts a cluster, without blocking a thread of the cooperative pool while it starts.
    public static func start() async throws -> PostgresCluster {
        guard let binaries = Self.binaries else { throw TestFailure(Self.skipReason) }
        // A port free now (the refusing socket closes as it goes), for the server to bind.
        let cluster = try PostgresCluster(binaries: binaries, port: Int(try RefusingPort().port))
        let data = cluster.directory.appendingPathComponent("data").path
        try await cluster.runAsync("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"])
        try await cluster.runAsync("pg_ctl", ["-D", data, "-l", cluster.directory.appendingPathComponent("log").path, "-w", "-o",
                                              "-p \(cluster.port) -k \(cluster.directory.path) -c listen_addresses=127.0.0.1 -c max_connections=50",
                                              "start"])
        return cluster
    }

    private let port: Int

    private init(binaries: URL, port: Int) throws {
        self.binaries = binaries
        self.port = port
        user = getuid() == 0 ? "postgres" : nil
        Self.removeAbandoned(binaries: binaries, user: user)
        // The owner's process id in the name lets a later run stop what a crashed one left behind.
        directory = URL(fileURLWithPath: "/tmp/openstorekit-pg-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if let user, Self.spawn("/bin/chown", ["-R", user, directory.path]).0 != 0 { throw TestFailure("cannot give \(directory.path) to \(user)") }
        url = "postgres://postgres@127.0.0.1:\(port)/postgres"
    }

    /// Runs a server tool (as `postgres` when root), waiting for it on a thread of its own.
    private func runAsync(_ tool: String, _ arguments: [String]) async throws {
        let path = binaries.appendingPathComponent(tool).path
        let (executable, all) = user.map { ("/usr/sbin/runuser", ["-u", $0, "--", path] + arguments) } ?? (path, arguments)
        let (status, output) = await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: Self.spawn(executable, all)) }
        }
        guard status == 0 else { throw TestFailure("\(tool) \(arguments.joined(separator: " ")) failed (\(status)): \(output)") }
    }

    /// Runs a program to its end (a ``Subprocess``: `pg_ctl` leaves a server running that inherits its
    /// descriptors, which Foundation's `Process` would wait on for good).
    private static func spawn(_ executable: String, _ arguments: [String]) -> (Int32, String) {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("pg-run-\(UUID().uuidString).log").path
        defer { unlink(log) }
        guard let child = try? Subprocess(URL(fileURLWithPath: executable), arguments, output: .file(log), error: .sameAsOutput) else {
            return (-1, "cannot start \(executable)")
        }
        return (child.exitCode, (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
    }

    /// Stops the server at once and removes its folder.
    deinit {
        let path = binaries.appendingPathComponent("pg_ctl").path
        let arguments = ["-D", directory.appendingPathComponent("data").path, "-m", "immediate", "-w", "stop"]
        _ = user.map { Self.spawn("/usr/sbin/runuser", ["-u", $0, "--", path] + arguments) } ?? Self.spawn(path, arguments)
        try? FileManager.default.removeItem(at: directory)
    }

    /// Stops and removes the clusters of test processes that ended without stopping theirs (a crash, a kill).
    private static func removeAbandoned(binaries: URL, user: String?) {
        let root = URL(fileURLWithPath: "/tmp")
        for name in (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? [] where name.hasPrefix("openstorekit-pg-") {
            let parts = name.split(separator: "-")
            guard parts.count == 4, let owner = pid_t(parts[2]), kill(owner, 0) != 0, errno == ESRCH else { continue }
            let folder = root.appendingPathComponent(name)
            let path = binaries.appendingPathComponent("pg_ctl").path
            let arguments = ["-D", folder.appendingPathComponent("data").path, "-m", "immediate", "-w", "stop"]
            _ = user.map { spawn("/usr/sbin/runuser", ["-u", $0, "--", path] + arguments) } ?? spawn(path, arguments)
            try? FileManager.default.removeItem(at: folder)
        }
    }
}
