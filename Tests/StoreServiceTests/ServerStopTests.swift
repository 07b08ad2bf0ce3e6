import AppStoreSimulator
import AppStoreSimulatorSQL
import Foundation
import HTTPService
import StoreService
import Testing
import TestSupport

/// Stopping a server never blocks a thread: open long polls answer at once, a request that cannot
/// finish gets a 503 after the grace period, and servers stopped from every thread of Swift's
/// cooperative pool at once all end. (The synchronous stop this replaces blocked the pool's threads
/// waiting for handlers that needed those threads, and the suite hung.)
@Suite(.timeLimit(.minutes(10)))
struct ServerStopTests {
    /// Opens `count` long polls on `server`'s devices and waits until the store holds every one.
    static func openLongPolls(_ count: Int, on server: StoreServer, store: SimulatedAppStore, device: String) async throws -> [Task<Exchange, any Error>] {
        let polls = (0..<count).map { _ in
            // The client waits longer than the poll itself: a poll whose 60 s run out on a loaded machine
            // before its server stops answers 200 too, and must not be cut off by the client first.
            Task { try await Exchange.send("GET", URL(string: "\(server.url.absoluteString)/v1/devices/\(device)/updates?wait=60")!, timeout: .seconds(180)) }
        }
        try await eventually("\(count) long polls waiting at \(server.url)") { await store.updateWaiterCount(device: device) == count }
        return polls
    }

    @Test("as many servers as twice the pool's threads, each with 10 long polls open, stopped all at once from the pool: every poll answers, every stop ends")
    func stopsFromEveryPoolThread() async throws {
        let scratch = Scratch()
        let servers = 2 * ProcessInfo.processInfo.activeProcessorCount
        var served: [(store: SimulatedAppStore, server: StoreServer, polls: [Task<Exchange, any Error>])] = []
        for index in 0..<servers {
            let store = try await TestStores.directory(in: scratch, name: "store\(index)").store
            try await store.addDevice("phone", account: "alice")
            let server = try StoreServer(store: store)
            served.append((store, server, try await Self.openLongPolls(10, on: server, store: store, device: "phone")))
        }
        // Every stop at once: more of them than the pool has threads.
        await withTaskGroup(of: Void.self) { group in
            for entry in served { group.addTask { await entry.server.stop() } }
        }
        for entry in served {
            for poll in entry.polls {
                let answer = try await poll.value
                #expect(answer.status == 200, "an open long poll answers when its server stops")
                #expect(answer.json?["updates"] as? [Any] != nil)
            }
        }
    }

    @Test("a request stuck behind another process's write lock gets a 503 when the server stops, and the stop ends")
    func stuckRequestGetsA503() async throws {
        let scratch = Scratch()
        let (directory, store) = try await TestStores.directory(in: scratch)
        try await store.addDevice("phone", account: "alice")
        let server = try StoreServer(store: store)
        let polls = try await Self.openLongPolls(5, on: server, store: store, device: "phone")
        // Another process takes the ledger's write lock and keeps it: a purchase waits for it (on the
        // store's own executor, not the pool) for longer than the test lasts.
        let database = StoreDirectory.databaseURL(in: directory).path
        let holder = try Subprocess(URL(fileURLWithPath: "/usr/bin/env"),
                                    ["python3", "-c", "import sqlite3, sys, time\nc = sqlite3.connect(sys.argv[1], isolation_level=None)\nc.execute('BEGIN IMMEDIATE')\nprint('locked', flush=True)\ntime.sleep(600)", database],
                                    output: .pipe)
        defer { holder.signal(SIGKILL) }
        #expect(await holder.readLine() == "locked")
        let purchase = Task {
            try await Exchange.send("POST", server.url.appendingPathComponent("/v1/devices/phone/purchases"), json: #"{"productID": "\#(ExampleShop.pro)"}"#)
        }
        // The purchase is in the server, waiting for the lock, when the server stops.
        try await eventually("the purchase waiting for the write lock") { server.requestsInProgress == 6 }
        // The polls answer as soon as their handlers are cancelled; the grace is for the stuck purchase
        // only, and long enough that a loaded machine's polls are not cut off with it.
        await server.stop(grace: .seconds(5))
        let answer = try await purchase.value
        #expect(answer.status == 503, "the stuck purchase is answered, not left hanging")
        for poll in polls { #expect(try await poll.value.status == 200) }
    }

    @Test("storekit serve answers its open long polls when it gets SIGTERM, then exits",
          .enabled(if: Built.available, "the storekit binary is not built; run swift build first"))
    func serveAnswersLongPollsOnSIGTERM() async throws {
        let scratch = Scratch()
        let directory = try await makeStoreDirectory(in: scratch)
        let server = try await ServeProcess.start(directory: directory)
        let register = try await Exchange.send("POST", server.url.appendingPathComponent("/v1/devices/phone"), json: #"{"account": "alice"}"#)
        #expect(register.status == 200)
        let polls = (0..<50).map { _ in
            Task { try await Exchange.send("GET", URL(string: "\(server.url.absoluteString)/v1/devices/phone/updates?wait=60")!) }
        }
        // Every poll waits at the server (the health request itself is the 51st in progress).
        try await eventually("50 long polls open at storekit serve") {
            let health = try await Exchange.send("GET", server.url.appendingPathComponent("/health"))
            return health.json?["requestsInProgress"] as? Int == 51
        }
        let ended = await server.stop(signal: SIGTERM)
        #expect(ended.exitCode == 0, "serve exits cleanly on SIGTERM")
        for poll in polls {
            let answer = try await poll.value
            #expect(answer.status == 200, "an open long poll is answered before serve exits")
            #expect(answer.json?["updates"] as? [Any] != nil)
        }
    }
}
