import COpenSSL

/// Reads and clears OpenSSL's thread-local error queue.
package enum OpenSSLErrorQueue {
    /// The reasons queued since the last call, joined, or `fallback` when the queue is empty.
    package static func drain(fallback: String) -> String {
        var reasons: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            reasons.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return reasons.isEmpty ? fallback : reasons.joined(separator: "; ")
    }

    /// Forgets whatever an expected failure left on the queue.
    package static func clear() {
        ERR_clear_error()
    }
}

/// A failure inside OpenSSL, with OpenSSL's own reason.
package struct OpenSSLFailure: Error, CustomStringConvertible {
    package var operation: String
    package var reason: String

    package init(_ operation: String) {
        self.operation = operation
        self.reason = OpenSSLErrorQueue.drain(fallback: "no reason given")
    }

    package var description: String { "\(operation) failed: \(reason)" }
}
