import Foundation

/// Runs a program to its end without blocking a thread of Swift's cooperative pool (tests run on a
/// pool as small as the machine's cores, and a blocked pool thread can starve servers in the same process).
public enum ChildProcess {
    public struct Result: Sendable {
        public var status: Int32
        public var standardOutput: String
        public var standardError: String
    }

    public static func run(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil) async throws -> Result {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let out = scratch.appendingPathComponent("out"), err = scratch.appendingPathComponent("err")
        // With an environment of its own, `env -i` starts the program with exactly that.
        let (program, all) = environment.map { variables in
            (URL(fileURLWithPath: "/usr/bin/env"), ["-i"] + variables.map { "\($0.key)=\($0.value)" } + [executable.path] + arguments)
        } ?? (executable, arguments)
        let child = try Subprocess(program, all, output: .file(out.path), error: .file(err.path))
        let ended = await child.termination()
        return Result(status: ended.exitCode, standardOutput: String(decoding: (try? Data(contentsOf: out)) ?? Data(), as: UTF8.self),
                      standardError: String(decoding: (try? Data(contentsOf: err)) ?? Data(), as: UTF8.self))
    }
}
