import Foundation

/// An `application/x-www-form-urlencoded` body, as HTML forms post it.
struct FormBody {
    private(set) var fields: [String: String] = [:]

    init(_ data: Data) {
        for pair in String(decoding: data, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { part in
                String(part).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(part)
            }
            guard let name = parts.first, !name.isEmpty else { continue }
            fields[name] = parts.count > 1 ? parts[1] : ""
        }
    }

    subscript(_ name: String) -> String? { fields[name].flatMap { $0.isEmpty ? nil : $0 } }
}
