import CMicroHTTPD
import Dispatch
import Foundation
import Synchronization

/// The deadline for receiving a whole request, headers and body.
///
/// libmicrohttpd's timeout counts idle time only, so a client that sends one header line every few
/// seconds keeps its connection forever, and enough such clients hold every connection. Each
/// connection's clock starts when it opens, stops when its request has fully arrived (the handler's
/// time is not the client's: a long poll is not cut), and starts again when the answer has been sent,
/// for the next request on a kept-alive connection. A sweep every half second shuts down the socket
/// of a connection whose request is late; libmicrohttpd then sees the connection end and closes it.
///
/// Shutting down a descriptor the library owns is safe only while the library has not closed it:
/// libmicrohttpd reports a connection closed before it closes its socket, and that report removes
/// the connection here under the same lock the sweep holds.
final class RequestDeadlines: Sendable {
    let limit: Duration
    private let connections = Mutex<[UInt: Connection]>([:])
    /// The sweep's timer, on a dispatch queue of its own (never Swift's cooperative pool).
    private let sweeper: SweepTimer
    private let cutOff = Atomic<Int>(0)

    private struct Connection {
        let descriptor: Int32
        /// When the request now arriving started; `nil` while its handler works.
        var receivingSince: ContinuousClock.Instant?
        var isShutDown = false
    }

    init(limit: Duration) {
        self.limit = limit
        sweeper = SweepTimer(DispatchSource.makeTimerSource(queue: DispatchQueue(label: "HTTPServer.requestDeadlines")))
        sweeper.timer.schedule(deadline: .now() + .milliseconds(500), repeating: .milliseconds(500), leeway: .milliseconds(100))
        sweeper.timer.setEventHandler { [weak self] in self?.sweep() }
        sweeper.timer.activate()
    }

    /// Requests closed because they did not arrive in time.
    var requestsCutOff: Int { cutOff.load(ordering: .relaxed) }

    func stop() { sweeper.timer.cancel() }

    func opened(_ connection: OpaquePointer, descriptor: Int32) {
        let now = ContinuousClock.now
        connections.withLock { $0[key(connection)] = Connection(descriptor: descriptor, receivingSince: now) }
    }

    /// The request has arrived (or was answered before its body was read): its clock stops.
    func received(_ connection: OpaquePointer) {
        connections.withLock { $0[key(connection)]?.receivingSince = nil }
    }

    /// The answer was sent: the clock of the next request on the connection starts.
    func answered(_ connection: OpaquePointer) {
        let now = ContinuousClock.now
        connections.withLock { $0[key(connection)]?.receivingSince = now }
    }

    func closed(_ connection: OpaquePointer) {
        _ = connections.withLock { $0.removeValue(forKey: key(connection)) }
    }

    private func sweep() {
        let late = ContinuousClock.now - limit
        let shut = connections.withLock { connections -> Int in
            var shut = 0
            for (key, connection) in connections where !connection.isShutDown {
                guard let since = connection.receivingSince, since < late else { continue }
                shutdown(connection.descriptor, Int32(SHUT_RDWR))
                connections[key]?.isShutDown = true
                shut += 1
            }
            return shut
        }
        if shut > 0 { cutOff.add(shut, ordering: .relaxed) }
    }

    private func key(_ connection: OpaquePointer) -> UInt { UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection))) }
}

/// A dispatch timer, which is safe to use from any thread (Dispatch's sources are thread-safe) but
/// not marked `Sendable`.
private final class SweepTimer: @unchecked Sendable {
    let timer: any DispatchSourceTimer
    init(_ timer: any DispatchSourceTimer) { self.timer = timer }
}
