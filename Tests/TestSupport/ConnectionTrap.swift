import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A TCP listener that never accepts: a connection made to it completes in the kernel's backlog, so
/// ``connections()`` counts every connection ever made to it, whenever it was made, with no thread
/// watching. It stands where a stored URL points, to see whether anyone went there.
public final class ConnectionTrap: Sendable {
    private let descriptor: Int32
    private let taken = Mutex(0)
    public let host: String
    public let port: UInt16

    public init(host: String) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard descriptor >= 0 else { throw TestFailure("cannot make a socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(host)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard bound, listen(descriptor, 64) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw TestFailure("cannot listen on \(host): \(reason)")
        }
        self.descriptor = descriptor
        self.host = host
        port = UInt16(bigEndian: address.sin_port)
    }

    /// Connections made so far: those waiting in the backlog are taken (without waiting) and closed.
    public func connections() -> Int {
        taken.withLock { count in
            while true {
                let connection = accept(descriptor, nil, nil)
                if connection < 0 { break }
                close(connection)
                count += 1
            }
            return count
        }
    }

    deinit { close(descriptor) }
}
