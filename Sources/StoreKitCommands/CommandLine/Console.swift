import BlockingWork
import Foundation
import Synchronization

/// Where a command writes: standard output and standard error, or buffers in tests.
public final class Console: Sendable {
    private let writeOut: @Sendable (Data) -> Void
    private let writeError: @Sendable (Data) -> Void
    private let readInput: @Sendable () async -> Data

    public init(out: @escaping @Sendable (Data) -> Void, error: @escaping @Sendable (Data) -> Void,
                input: @escaping @Sendable () async -> Data = { Data() }) {
        self.writeOut = out
        self.writeError = error
        self.readInput = input
    }

    /// The process's own standard streams.
    public static let standard = Console(
        out: { FileHandle.standardOutput.write($0) },
        error: { FileHandle.standardError.write($0) },
        input: { await StandardInput.readToEnd() })

    /// Writes a line to standard output.
    public func print(_ text: String) { writeOut(Data((text + "\n").utf8)) }
    /// Writes bytes to standard output as they are.
    public func write(_ data: Data) { writeOut(data) }
    /// Writes a line to standard error.
    public func printError(_ text: String) { writeError(Data((text + "\n").utf8)) }
    /// Reads all of standard input, waiting for its end off Swift's cooperative pool (a pipe's
    /// writer may take its time).
    public func readStandardInput() async -> Data { await readInput() }
}

/// A console that keeps what commands write, for tests.
public final class RecordingConsole: Sendable {
    private let buffers = Mutex<(out: Data, error: Data)>((Data(), Data()))
    private let input: Data

    public init(input: Data = Data()) { self.input = input }

    public var console: Console {
        Console(out: { data in self.buffers.withLock { $0.out.append(data) } },
                error: { data in self.buffers.withLock { $0.error.append(data) } },
                input: { self.input })
    }

    public var standardOutput: String { buffers.withLock { String(decoding: $0.out, as: UTF8.self) } }
    public var standardOutputData: Data { buffers.withLock { $0.out } }
    public var standardError: String { buffers.withLock { String(decoding: $0.error, as: UTF8.self) } }
}
