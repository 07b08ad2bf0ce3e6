import AppStoreSimulator
import AppStoreSimulatorSQLite
import Dispatch
import Foundation
import HTTPService
import StoreService

/// `storekit serve`: the store in DIR as a network service for apps, browsers, scripts and backends.
///
/// The first line on standard output is `listening on http://HOST:PORT`. Every other `storekit`
/// command keeps working on DIR meanwhile (they share the ledger). On the real clock the server holds
/// the store's lifecycle lease and plays renewals as they fall due. SIGINT or SIGTERM stops it
/// cleanly; `kill -9` loses nothing that was acknowledged.
struct ServeCommand: Command {
    static let name = "serve"
    static let abstract = "Serve the store in DIR over HTTP: the device API for apps and the admin API (see docs/)."
    static let usage = "DIR [--host 127.0.0.1] [--port N] [--clock manual|real]"

    var directory: String
    var host: String
    var port: UInt16
    var clock: StoreDirectory.ClockMode?

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        host = try arguments.value("--host") ?? "127.0.0.1"
        port = try arguments.value("--port", expected: "a port number from 0 to 65535") { UInt16($0) } ?? 0
        clock = try arguments.value("--clock", expected: "manual or real") { StoreDirectory.ClockMode(rawValue: $0) }
        directory = try arguments.positional("DIR")
    }

    func run(console: Console) async throws {
        let url = URL(fileURLWithPath: directory)
        let mode = try clock ?? StoreDirectory.clockMode(at: url)
        let store = try StoreDirectory.open(at: url, clockMode: mode)
        let server: StoreServer
        let authority = try StoreDirectory.authority(at: url)
        do { server = try StoreServer(store: store, authority: authority, host: host, port: port) } catch { throw CommandFailure(error.description) }
        var lifecycle: Task<Void, Never>?
        if mode == .real {
            // The server plays the renewals; commands and other servers leave them to it.
            guard try await store.holdLifecycleLease(wait: false) else {
                await server.stop()
                throw CommandFailure("another process plays this store's renewals (a server or an advance is running on \(directory))")
            }
            lifecycle = Task { await Self.playDueEvents(of: store) }
        }
        console.print("listening on \(server.url.absoluteString)")
        console.print("Transaction Manager: \(server.url.absoluteString)/")
        console.print("storefront: \(server.url.absoluteString)/store")
        let signal = await Self.terminationSignal()
        lifecycle?.cancel()
        _ = await lifecycle?.value
        // Open long polls answer before the process exits: clients see an answer, not a reset.
        await server.stop()
        await store.releaseLifecycleLease()
        console.printError("stopped (\(signal == SIGINT ? "SIGINT" : "SIGTERM"))")
    }

    /// Plays what falls due on the real clock, a few times a second.
    static func playDueEvents(of store: SimulatedAppStore) async {
        while !Task.isCancelled {
            do {
                try await store.processDueEvents()
            } catch {
                FileHandle.standardError.write(Data("storekit serve: playing renewals failed, retrying: \(error)\n".utf8))
            }
            try? await Task.sleep(for: .milliseconds(200))
        }
    }

    /// Waits for SIGINT or SIGTERM and returns which came.
    static func terminationSignal() async -> Int32 {
        await withCheckedContinuation { continuation in
            let once = SignalOnce(continuation)
            for number in [SIGINT, SIGTERM] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { once.resume(number) }
                source.resume()
                once.keep(source)
            }
        }
    }
}

/// Resumes a continuation with the first signal that arrives, and keeps the signal sources alive.
final class SignalOnce: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Int32, Never>?
    private var sources: [any DispatchSourceSignal] = []

    init(_ continuation: CheckedContinuation<Int32, Never>) { self.continuation = continuation }

    func keep(_ source: any DispatchSourceSignal) {
        lock.lock()
        sources.append(source)
        lock.unlock()
    }

    func resume(_ number: Int32) {
        lock.lock()
        let pending = continuation
        continuation = nil
        lock.unlock()
        pending?.resume(returning: number)
    }
}
