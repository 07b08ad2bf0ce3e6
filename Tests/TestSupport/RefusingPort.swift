import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A local TCP port that refuses every connection and that no other server can take meanwhile: a
/// socket bound to it that never listens. A port merely closed after use can be bound again by a
/// server in a parallel test, which would then answer in its place.
public final class RefusingPort: @unchecked Sendable {
    private let descriptor: Int32
    /// The port number on 127.0.0.1.
    public let port: UInt16

    public init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(descriptor, socketAddress, length) == 0 && getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        guard bound else {
            close(descriptor)
            throw POSIXError(.EADDRINUSE)
        }
        self.descriptor = descriptor
        port = UInt16(bigEndian: address.sin_port)
    }

    /// `http://127.0.0.1:PORT/` followed by `path`.
    public func url(path: String = "/") -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    deinit { close(descriptor) }
}
