import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A local TCP port held for one test: bound to a socket that never listens, so connections to it
/// are refused, and no other test's server can take it meanwhile (a port probed free and closed could
/// be bound by a server in a parallel test, which would then answer in its place).
///
/// A server can still be started on it, and stopped, and started again: ``listeningSocket()`` makes
/// a second socket on the same port (both allow port sharing, which only sockets that ask for it
/// get) that listens, for `HTTPServer(listeningSocket:)`, which closes it when the server stops.
public final class ReservedPort: Sendable {
    private let descriptor: Int32
    /// The port number on 127.0.0.1.
    public let port: UInt16

    public init() throws {
        (descriptor, port) = try Self.bind(port: 0)
    }

    /// `http://127.0.0.1:PORT/` followed by `path`.
    public func url(path: String = "/") -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// A new socket on this port, listening; the caller (a server) owns it.
    public func listeningSocket() throws -> Int32 {
        let (socket, _) = try Self.bind(port: port)
        guard listen(socket, 1024) == 0 else {
            close(socket)
            throw TestFailure("cannot listen on 127.0.0.1:\(port): \(String(cString: strerror(errno)))")
        }
        return socket
    }

    deinit { close(descriptor) }

    private static func bind(port: UInt16) throws -> (Int32, UInt16) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw TestFailure("cannot make a socket: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEPORT, &yes, socklen_t(MemoryLayout<Int32>.size))
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                Glibc.bind(descriptor, socketAddress, length) == 0 && getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        guard bound else {
            close(descriptor)
            throw TestFailure("cannot bind 127.0.0.1:\(port): \(String(cString: strerror(errno)))")
        }
        return (descriptor, UInt16(bigEndian: address.sin_port))
    }
}
