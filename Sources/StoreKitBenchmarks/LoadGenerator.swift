import Foundation
import StoreKitCommands

/// A keep-alive HTTP load generator for the benchmarks: Debian's `wrk` (`scripts/bootstrap`
/// installs it), driven by `wrk-report.lua`, which shapes the requests and reports as JSON.
///
/// A real load generator measures the server: a client written on Foundation's URLSession tops out
/// near 3,500 requests a second here, far below what libmicrohttpd answers.
struct LoadGenerator {
    /// What one run measured.
    struct Measurement: Decodable {
        var requests: Int
        var durationMicroseconds: Int
        /// Answers other than 2xx and 3xx.
        var statusErrors: Int
        var connectErrors: Int
        var readErrors: Int
        var writeErrors: Int
        var timeouts: Int
        var medianLatencyMicroseconds: Int

        enum CodingKeys: String, CodingKey {
            case requests, timeouts
            case durationMicroseconds = "duration_us"
            case statusErrors = "status_errors"
            case connectErrors = "connect_errors"
            case readErrors = "read_errors"
            case writeErrors = "write_errors"
            case medianLatencyMicroseconds = "latency_p50_us"
        }

        var requestsPerSecond: Double { Double(requests) / (Double(durationMicroseconds) / 1_000_000) }
        var errors: Int { statusErrors + connectErrors + readErrors + writeErrors + timeouts }
    }

    /// The executable, found on the `PATH`.
    static let executable = "wrk"

    let connections: Int
    let threads: Int
    let seconds: Double

    /// Sends requests to `server` for the run's duration: `method` to each of `paths` in turn, with
    /// `body` as JSON when given. Fails when `wrk` is missing or any request failed.
    func measure(_ server: URL, method: String = "GET", paths: [String], body: String? = nil) async throws(CommandFailure) -> Measurement {
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("storekit-wrk-\(UUID().uuidString).lua")
        do { try Data(PackageResources.wrk_report_lua).write(to: script) } catch { throw CommandFailure("cannot write \(script.path): \(error)") }
        defer { try? FileManager.default.removeItem(at: script) }
        let arguments = ["--threads", String(threads), "--connections", String(connections), "--duration", "\(Int(seconds.rounded(.up)))s",
                         "--timeout", "10s", "--script", script.path, server.absoluteString, "--", method, paths.joined(separator: ","), body ?? ""]
        let run: ChildProgram.Outcome
        do { run = try await ChildProgram.run(Self.executable, arguments) } catch {
            throw CommandFailure("\(error.description) (the benchmarks measure servers with wrk: scripts/bootstrap installs it)")
        }
        let output = String(decoding: run.standardOutput, as: UTF8.self)
        guard run.status == 0, let line = output.split(separator: "\n").last,
              let measurement = try? JSONDecoder().decode(Measurement.self, from: Data(line.utf8)) else {
            throw CommandFailure("wrk failed (exit \(run.status)): \(output)")
        }
        guard measurement.errors == 0 else {
            throw CommandFailure("\(method) \(paths.first ?? "") under load: \(measurement.errors) requests failed (\(output.split(separator: "\n").last ?? ""))")
        }
        return measurement
    }
}
