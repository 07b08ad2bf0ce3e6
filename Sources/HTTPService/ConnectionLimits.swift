import CMicroHTTPD
import Dispatch
import Foundation
import Synchronization

/// Who keeps a connection: the request deadline, and room for every client when one client opens
/// thousands.
///
/// **The request deadline.** libmicrohttpd's timeout counts idle time only, so a client that sends
/// one header line every few seconds keeps its connection forever. Each connection's clock starts
/// when it opens, stops when its request has fully arrived (the handler's time is not the client's:
/// a long poll is not cut), and starts again when the answer has been sent, for the next request on a
/// kept-alive connection. A sweep every half second shuts down the socket of a connection whose
/// request is late; libmicrohttpd then sees the connection end and closes it.
///
/// **Room.** On loopback every client is 127.0.0.1, so a limit per address cannot tell one local
/// process from another. Instead, connections that wait for a request (idle keep-alives, requests
/// not yet sent) are the ones that give way: once open connections reach the capacity less a
/// reserve, each new connection shuts down the one that has waited longest, and while the server is
/// crowded (three quarters of its capacity open) a connection may wait only ``crowdedDeadline`` for its
/// request.
/// A connection whose handler is working (a long poll) is never dropped; long polls have a budget of
/// their own, below the capacity, where the handlers count them.
///
/// **Lingering close.** A connection answered before its body was read (a `413`) would close with
/// unread bytes, and the kernel would then reset it, perhaps before the client read its answer. Its
/// socket is kept open after libmicrohttpd lets go of it (a duplicate descriptor), the rest of the
/// body is read and thrown away until the client closes or the request deadline passes, and only
/// then is it closed (the lingering close of HTTP/1.1 servers). A lingering socket is an open
/// connection like any other: it counts against the capacity, and it is the first to give way when
/// room runs short (its answer is already sent), before any connection waiting for a request, so
/// clients that keep thousands of answered sockets open cannot take the room of `/health` and the pages.
///
/// Shutting down a descriptor the library owns is safe only while the library has not closed it:
/// libmicrohttpd reports a connection closed before it closes its socket, and that report removes
/// the connection here under the same lock the sweep holds.
final class ConnectionLimits: Sendable {
    let requestDeadline: Duration
    /// How long a connection may wait for its request while the server is crowded.
    let crowdedDeadline: Duration
    /// Connections the server keeps open at most.
    let capacity: Int
    /// Connections kept free for new clients: waiting connections give way once this much room is left.
    let reserve: Int
    private let state = Mutex(State())
    /// The sweep's timer, on a dispatch queue of its own (never Swift's cooperative pool).
    private let sweeper: SweepTimer
    private let lingering: DispatchQueue
    private let cutOff = Atomic<Int>(0)
    private let dropped = Atomic<Int>(0)

    private struct Connection {
        let descriptor: Int32
        /// When the request now arriving started; `nil` while its handler works.
        var receivingSince: ContinuousClock.Instant?
        /// Counts the times the connection started waiting, so the queue's stale entries are known.
        var generation = 0
        var isShutDown = false
        /// Answered before its body was read: closed only after the rest of the body is read.
        var lingersOnClose = false
    }

    private struct State {
        var connections: [UInt: Connection] = [:]
        var shutDownCount = 0
        /// Sockets in their lingering close, by descriptor, and the order they began it.
        var lingering: [Int32: LingeringSocket] = [:]
        var lingeringOrder: [Int32] = []
        var lingeringHead = 0
        /// Waiting connections, longest-waiting first (entries go stale as connections move on).
        var waitingOrder: [(key: UInt, generation: Int)] = []
        var waitingHead = 0

        var openCount: Int { connections.count - shutDownCount + lingering.count }

        /// Ends the lingering close that began first (its socket closes on the lingering queue);
        /// `false` when none lingers.
        mutating func endOldestLingering() -> Bool {
            while lingeringHead < lingeringOrder.count {
                let descriptor = lingeringOrder[lingeringHead]
                lingeringHead += 1
                if lingeringHead > 4_096, lingeringHead * 2 > lingeringOrder.count {
                    lingeringOrder.removeFirst(lingeringHead)
                    lingeringHead = 0
                }
                guard let socket = lingering.removeValue(forKey: descriptor) else { continue }
                socket.reader.cancel()
                return true
            }
            return false
        }

        mutating func shutDown(_ key: UInt) {
            guard let connection = connections[key], !connection.isShutDown else { return }
            Glibc.shutdown(connection.descriptor, Int32(SHUT_RDWR))
            connections[key]?.isShutDown = true
            shutDownCount += 1
        }

        /// The connection that has waited longest for its request, other than `sparing`.
        mutating func longestWaiting(sparing: UInt) -> UInt? {
            while waitingHead < waitingOrder.count {
                let entry = waitingOrder[waitingHead]
                // The connection spared is the newest: reaching it, no one else waits. Its entry stays.
                if entry.key == sparing { return nil }
                waitingHead += 1
                guard let connection = connections[entry.key], !connection.isShutDown,
                      connection.receivingSince != nil, connection.generation == entry.generation else { continue }
                return entry.key
            }
            return nil
        }

        mutating func startWaiting(_ key: UInt, at instant: ContinuousClock.Instant) {
            guard var connection = connections[key] else { return }
            connection.receivingSince = instant
            connection.generation += 1
            connections[key] = connection
            waitingOrder.append((key, connection.generation))
            if waitingHead > 4_096, waitingHead * 2 > waitingOrder.count {
                waitingOrder.removeFirst(waitingHead)
                waitingHead = 0
            }
        }
    }

    init(requestDeadline: Duration, capacity: Int, crowdedDeadline: Duration = .seconds(2)) {
        self.requestDeadline = requestDeadline
        self.crowdedDeadline = min(crowdedDeadline, requestDeadline)
        self.capacity = max(1, capacity)
        self.reserve = max(1, min(capacity / 20, 512))
        lingering = DispatchQueue(label: "HTTPServer.lingeringClose")
        sweeper = SweepTimer(DispatchSource.makeTimerSource(queue: DispatchQueue(label: "HTTPServer.connectionLimits")))
        sweeper.timer.schedule(deadline: .now() + .milliseconds(500), repeating: .milliseconds(500), leeway: .milliseconds(100))
        sweeper.timer.setEventHandler { [weak self] in self?.sweep() }
        sweeper.timer.activate()
    }

    /// Requests closed because they did not arrive in time.
    var requestsCutOff: Int { cutOff.load(ordering: .relaxed) }
    /// Waiting connections closed to make room for new ones.
    var connectionsDropped: Int { dropped.load(ordering: .relaxed) }
    /// Connections open now, lingering ones included (those being shut down not counted).
    var openConnections: Int { state.withLock { $0.openCount } }
    /// Sockets in their lingering close now.
    var lingeringConnections: Int { state.withLock { $0.lingering.count } }

    func stop() { sweeper.timer.cancel() }

    /// A connection opened: it waits for its request, and if room is short, the connection that has
    /// waited longest gives way.
    func opened(_ connection: OpaquePointer, descriptor: Int32) {
        let now = ContinuousClock.now
        let key = key(connection)
        let shut = state.withLock { state -> Int in
            state.connections[key] = Connection(descriptor: descriptor, receivingSince: nil)
            state.startWaiting(key, at: now)
            var shut = 0
            while state.openCount > capacity - reserve {
                // Answered sockets that linger give way first, then those that waited longest.
                if state.endOldestLingering() {
                    shut += 1
                } else if let victim = state.longestWaiting(sparing: key) {
                    state.shutDown(victim)
                    shut += 1
                } else {
                    break
                }
            }
            return shut
        }
        if shut > 0 { dropped.add(shut, ordering: .relaxed) }
    }

    /// The request has arrived (or was answered before its body was read): its clock stops.
    func received(_ connection: OpaquePointer) {
        state.withLock { $0.connections[key(connection)]?.receivingSince = nil }
    }

    /// The request was answered before its body was read: when the connection closes, the rest of
    /// the body is read and thrown away first (see the type's notes).
    func lingerOnClose(_ connection: OpaquePointer) {
        state.withLock { $0.connections[key(connection)]?.lingersOnClose = true }
    }

    /// The answer was sent: the clock of the next request on the connection starts.
    func answered(_ connection: OpaquePointer) {
        let now = ContinuousClock.now
        state.withLock { $0.startWaiting(key(connection), at: now) }
    }

    /// libmicrohttpd is about to close the connection's socket.
    func closed(_ connection: OpaquePointer) {
        let lingering = state.withLock { state -> Int32? in
            guard let closed = state.connections.removeValue(forKey: key(connection)) else { return nil }
            if closed.isShutDown { state.shutDownCount -= 1 }
            // The duplicate keeps the socket open after libmicrohttpd closes its descriptor.
            return closed.lingersOnClose && !closed.isShutDown ? dup(closed.descriptor) : nil
        }
        if let lingering, lingering >= 0 { linger(lingering) }
    }

    /// Reads and discards what the client still sends, until it closes or the request deadline
    /// passes, then closes the socket: the answer already sent is not lost to a reset. A read
    /// source on one serial queue per server; no thread waits.
    private func linger(_ descriptor: Int32) {
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        Glibc.shutdown(descriptor, Int32(SHUT_WR))
        let source = LingeringSocket(DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: lingering))
        source.reader.setEventHandler {
            var buffer = [UInt8](repeating: 0, count: 16_384)
            while true {
                let read = recv(descriptor, &buffer, buffer.count, 0)
                if read > 0 { continue }
                if read < 0, errno == EINTR { continue }
                if read < 0, errno == EAGAIN || errno == EWOULDBLOCK { return }
                source.reader.cancel()
                return
            }
        }
        source.reader.setCancelHandler { [weak self] in
            // Out of the count before the descriptor's number can be reused by a new socket.
            self?.state.withLock { state in
                if state.lingering[descriptor] === source { state.lingering[descriptor] = nil }
            }
            Glibc.close(descriptor)
        }
        state.withLock { state in
            state.lingering[descriptor] = source
            state.lingeringOrder.append(descriptor)
        }
        lingering.asyncAfter(deadline: .now() + .nanoseconds(Int(requestDeadline.components.seconds) * 1_000_000_000
                                                              + Int(requestDeadline.components.attoseconds / 1_000_000_000))) {
            source.reader.cancel()
        }
        source.reader.activate()
    }

    private func sweep() {
        let now = ContinuousClock.now
        let (late, crowdedOut) = state.withLock { state -> (Int, Int) in
            let isCrowded = state.openCount * 4 >= capacity * 3
            var late = 0, crowdedOut = 0
            for (key, connection) in state.connections where !connection.isShutDown {
                guard let since = connection.receivingSince else { continue }
                if since < now - requestDeadline {
                    state.shutDown(key)
                    late += 1
                } else if isCrowded, since < now - crowdedDeadline {
                    state.shutDown(key)
                    crowdedOut += 1
                }
            }
            // While crowded, answered sockets stop lingering: their answers went out long ago.
            if isCrowded {
                while state.endOldestLingering() { crowdedOut += 1 }
            }
            return (late, crowdedOut)
        }
        if late > 0 { cutOff.add(late, ordering: .relaxed) }
        if crowdedOut > 0 { dropped.add(crowdedOut, ordering: .relaxed) }
    }

    private func key(_ connection: OpaquePointer) -> UInt { UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection))) }
}

/// A read source of a socket in its lingering close, used only on the lingering queue.
private final class LingeringSocket: @unchecked Sendable {
    let reader: any DispatchSourceRead
    init(_ reader: any DispatchSourceRead) { self.reader = reader }
}

/// A dispatch timer, which is safe to use from any thread (Dispatch's sources are thread-safe) but
/// not marked `Sendable`.
private final class SweepTimer: @unchecked Sendable {
    let timer: any DispatchSourceTimer
    init(_ timer: any DispatchSourceTimer) { self.timer = timer }
}
