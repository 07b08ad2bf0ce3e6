import Foundation

/// Reads Prometheus' text exposition format (version 0.0.4) strictly, as a scraper would, for the
/// tests of `/metrics`: every line a comment (`# HELP`, `# TYPE`) or a sample of a declared family,
/// names and labels well formed, values numbers; histograms with cumulative buckets ending at `+Inf`
/// equal to `_count`. `promtool check metrics` (Debian's prometheus package) is run too when present.
public enum PrometheusText {
    /// A sample: its name, labels and value.
    public struct Sample: Sendable, Hashable {
        public let name: String
        public let labels: [String: String]
        public let value: Double
    }

    /// The samples of `text`, or the problems found in it.
    public static func parse(_ text: String) -> (samples: [Sample], problems: [String]) {
        var samples: [Sample] = []
        var problems: [String] = []
        var types: [String: String] = [:]
        guard text.hasSuffix("\n") else { return ([], ["the text does not end with a newline"]) }
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().enumerated() {
            let where_ = "line \(number + 1)"
            if line.hasPrefix("#") {
                let parts = line.split(separator: " ", maxSplits: 3).map(String.init)
                guard parts.count >= 3, ["HELP", "TYPE"].contains(parts[1]), isName(parts[2]) else {
                    problems.append("\(where_): a comment that is neither HELP nor TYPE of a metric name: \(line)")
                    continue
                }
                if parts[1] == "TYPE" {
                    guard parts.count == 4, ["counter", "gauge", "histogram", "summary", "untyped"].contains(parts[3]) else {
                        problems.append("\(where_): an unknown type: \(line)")
                        continue
                    }
                    if types[parts[2]] != nil { problems.append("\(where_): \(parts[2]) is typed twice") }
                    types[parts[2]] = parts[3]
                }
                continue
            }
            guard let sample = sample(String(line)) else {
                problems.append("\(where_): not a sample: \(line)")
                continue
            }
            let family = ["_bucket", "_sum", "_count"].first { sample.name.hasSuffix($0) && types[String(sample.name.dropLast($0.count))] == "histogram" }
                .map { String(sample.name.dropLast($0.count)) } ?? sample.name
            if types[family] == nil { problems.append("\(where_): \(sample.name) has no TYPE line before it") }
            if types[family] == "counter", !sample.name.hasSuffix("_total") { problems.append("\(where_): the counter \(sample.name) does not end in _total") }
            samples.append(sample)
        }
        // Histograms: buckets cumulative, the +Inf bucket equal to the count.
        for (family, type) in types where type == "histogram" {
            let buckets = samples.filter { $0.name == family + "_bucket" }
            let series = Dictionary(grouping: buckets) { $0.labels.filter { $0.key != "le" } }
            for (labels, buckets) in series {
                let ordered = buckets.sorted { (Double($0.labels["le"] ?? "") ?? .infinity) < (Double($1.labels["le"] ?? "") ?? .infinity) }
                if zip(ordered, ordered.dropFirst()).contains(where: { $0.value > $1.value }) { problems.append("\(family)\(labels): buckets are not cumulative") }
                let count = samples.first { $0.name == family + "_count" && $0.labels == labels }?.value
                if ordered.last?.labels["le"] != "+Inf" || ordered.last?.value != count { problems.append("\(family)\(labels): the +Inf bucket is not the count") }
            }
        }
        return (samples, problems)
    }

    /// Runs `promtool check metrics` on `text`: `nil` when promtool is not installed, else its verdict.
    public static func promtool(_ text: String) async throws -> (passed: Bool, output: String)? {
        guard let promtool = ["/usr/bin/promtool", "/usr/local/bin/promtool"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            return nil
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("metrics-\(UUID().uuidString).txt")
        try Data(text.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try await ChildProcess.run(URL(fileURLWithPath: "/bin/sh"), ["-c", "\(promtool) check metrics < \(file.path)"])
        return (result.status == 0, result.standardOutput + result.standardError)
    }

    private static func isName(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, first == "_" || first == ":" || (first.properties.isAlphabetic && first.isASCII) else { return false }
        return text.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == ":") }
    }

    /// `name{label="value",…} number`, label values with `\\`, `\"` and `\n` escapes.
    private static func sample(_ line: String) -> Sample? {
        var rest = Substring(line)
        let nameEnd = rest.firstIndex { $0 == "{" || $0 == " " } ?? rest.endIndex
        let name = String(rest[..<nameEnd])
        guard isName(name) else { return nil }
        rest = rest[nameEnd...]
        var labels: [String: String] = [:]
        if rest.first == "{" {
            rest = rest.dropFirst()
            while rest.first != "}" {
                guard let equals = rest.firstIndex(of: "="), isName(String(rest[..<equals])) else { return nil }
                let label = String(rest[..<equals])
                rest = rest[rest.index(after: equals)...]
                guard rest.first == "\"" else { return nil }
                rest = rest.dropFirst()
                var value = ""
                while let character = rest.first, character != "\"" {
                    rest = rest.dropFirst()
                    if character == "\\" {
                        guard let escaped = rest.first else { return nil }
                        rest = rest.dropFirst()
                        switch escaped {
                        case "\\": value.append("\\")
                        case "\"": value.append("\"")
                        case "n": value.append("\n")
                        default: return nil
                        }
                    } else {
                        value.append(character)
                    }
                }
                guard rest.first == "\"", labels[label] == nil else { return nil }
                labels[label] = value
                rest = rest.dropFirst()
                if rest.first == "," { rest = rest.dropFirst() }
            }
            rest = rest.dropFirst()
        }
        guard rest.first == " " else { return nil }
        let number = String(rest.dropFirst())
        let value: Double?
        switch number {
        case "+Inf": value = .infinity
        case "-Inf": value = -.infinity
        case "NaN": value = .nan
        default: value = Double(number)
        }
        guard let value else { return nil }
        return Sample(name: name, labels: labels, value: value)
    }
}
