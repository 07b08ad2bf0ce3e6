import BlockingWork
import Foundation

/// One HTTP exchange written byte for byte, for requests an HTTP client will not send (two
/// `Content-Length` headers, no `Host`, an announced body that never comes, a raw `%00` in a path).
/// The socket work runs off the cooperative pool.
public enum RawHTTP {
    public struct Answer: Sendable {
        /// The status code, or 0 when the server closed the connection without an answer.
        public var status: Int
        /// Everything the server sent.
        public var text: String
    }

    /// A TCP socket connected to 127.0.0.1:`port` (the caller closes it), or `nil` when nothing
    /// accepts there. Connecting on loopback does not wait for anyone.
    public static func connectedSocket(port: UInt16) -> Int32? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(descriptor)
            return nil
        }
        return descriptor
    }

    /// Sends `request` (with its `\r\n`s) to 127.0.0.1:`port` and reads until the server closes the
    /// connection or `limit` passes. The default is long: these exchanges check what the server
    /// answers, not how fast, and the whole suite on two cores has kept a server from answering for
    /// over 30 s (two clean-clone runs failed so). A test that expects no answer gives its own limit.
    public static func exchange(port: UInt16, _ request: String, limit: Duration = .seconds(180)) async -> Answer {
        let seconds = Int(limit.components.seconds)
        return await BlockingWork.run("RawHTTP") { () -> Answer in
            guard let descriptor = connectedSocket(port: port) else { return Answer(status: 0, text: "") }
            defer { close(descriptor) }
            var timeout = timeval(tv_sec: seconds, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let bytes = Array(request.utf8)
            _ = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            var received: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = recv(descriptor, &chunk, chunk.count, 0)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                received += chunk[0..<count]
                // One answer is enough: stop once its head and Content-Length body are in.
                if let text = String(validating: received, as: UTF8.self), let end = text.range(of: "\r\n\r\n") {
                    let head = text[..<end.lowerBound].lowercased()
                    if let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
                       let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)),
                       text.utf8.count - text[..<end.upperBound].utf8.count >= length { break }
                }
            }
            let text = String(decoding: received, as: UTF8.self)
            let status = text.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) } ?? 0
            return Answer(status: status, text: text)
        }
    }
}
