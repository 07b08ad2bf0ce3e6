import Foundation
import ServiceLogging

/// The rules a request's header block must meet before anything reads its body: one reading of
/// its length and of its host, so a proxy in front and this server never frame or route it two ways
/// (RFC 9112 §§ 3.2, 5.1, 6.1, 6.3).
enum RequestFraming {
    /// Headers every answer carries unless it sets its own: never framed by another page, never
    /// content-sniffed.
    static let defaultResponseHeaders: [(name: String, value: String)] = [
        ("X-Frame-Options", "DENY"),
        ("Content-Security-Policy", "frame-ancestors 'none'"),
        ("X-Content-Type-Options", "nosniff"),
    ]

    /// The longest request target (path and query) the server reads, in bytes; longer is `414`. (A
    /// signed notification, certificates and all, fits in a query: about 10 KB once escaped.)
    static let longestTarget = 16_384

    /// Why a request's headers are refused (`400`, or `501` for a transfer coding the server does
    /// not implement), or `nil` when they frame it one way only.
    static func refusal(of headers: [(name: String, value: String)]) -> (status: Int, message: String)? {
        for (name, _) in headers where name.isEmpty || name.contains(where: { $0 == " " || $0 == "\t" }) {
            return (400, "a header name holds whitespace (\"\(excerpt(name))\"): nothing may stand between a name and its colon")
        }
        let hosts = headers.filter { $0.name.lowercased() == "host" }
        if hosts.count > 1 { return (400, "the request has \(hosts.count) Host headers; it must have one") }
        if let host = hosts.first?.value, !isWellFormedHost(host) {
            return (400, "the Host \"\(excerpt(host))\" is not host[:port]")
        }
        let lengths = headers.filter { $0.name.lowercased() == "content-length" }
        let codings = headers.filter { $0.name.lowercased() == "transfer-encoding" }
        if lengths.count > 1 || lengths.contains(where: { Int($0.value) == nil || $0.value.contains(where: { !$0.isASCII || !$0.isNumber }) }) {
            return (400, "the request's length is given more than once, or is not a number")
        }
        if !codings.isEmpty, !lengths.isEmpty {
            return (400, "the request's length is given both as Content-Length and Transfer-Encoding")
        }
        if codings.count > 1 { return (400, "Transfer-Encoding is given more than once") }
        if let coding = codings.first?.value {
            let names = coding.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard names.last == "chunked" else {
                return (400, "the request's final transfer coding is \"\(excerpt(coding))\", not chunked")
            }
            if names != ["chunked"] {
                return (501, "this server decodes only the chunked transfer coding, not \"\(excerpt(coding))\"")
            }
        }
        return nil
    }

    /// Whether `value` is `host[:port]`: a name of RFC 3986's reg-name characters or an IPv4
    /// address, or an IPv6 literal in brackets, then at most a colon and digits.
    static func isWellFormedHost(_ value: String) -> Bool {
        var rest = Substring(value)
        if rest.hasPrefix("[") {
            guard let end = rest.firstIndex(of: "]") else { return false }
            let literal = rest[rest.index(after: rest.startIndex)..<end]
            guard !literal.isEmpty, literal.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return false }
            rest = rest[rest.index(after: end)...]
        } else {
            let name = rest.prefix { $0 != ":" }
            let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=%")
            guard !name.isEmpty, name.allSatisfy({ allowed.contains($0) }) else { return false }
            rest = rest[name.endIndex...]
        }
        guard let colon = rest.first else { return true }
        let port = rest.dropFirst()
        return colon == ":" && port.count <= 5 && port.allSatisfy { $0.isASCII && $0.isNumber }
    }

    static func excerpt(_ text: String) -> String { UntrustedText.excerpt(text) }
}
