import Foundation
import Synchronization

/// A server's operational metrics, written in Prometheus' text exposition format (version 0.0.4),
/// which every monitoring stack reads: counters, gauges and histograms, each family with fixed label
/// names. Label values must come from bounded sets (a route's pattern, never a raw path), so the
/// number of series stays bounded.
///
/// Recording is a lock and a dictionary update; gauges that describe state elsewhere (a queue's
/// length in a database) are set by collectors that run when the metrics are scraped.
public final class MetricsRegistry: Sendable {
    /// The kind of a metric family.
    public enum Kind: String, Sendable {
        case counter, gauge, histogram
    }

    private struct Family {
        let kind: Kind
        let help: String
        let labelNames: [String]
        let buckets: [Double]
        var values: [[String]: Double] = [:]
        var histograms: [[String]: HistogramSeries] = [:]
    }

    private struct HistogramSeries {
        var counts: [Int]
        var sum = 0.0
        var count = 0
    }

    /// The families by name, in the order they were declared (the order they are written in).
    private struct State {
        var families: [String: Family] = [:]
        var order: [String] = []
        var collectors: [@Sendable () async -> Void] = []
    }

    private let state = Mutex(State())

    public init() {}

    /// Latency buckets in seconds, from a millisecond to half a minute.
    public static let latencyBuckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

    private func declare(_ name: String, _ kind: Kind, help: String, labels: [String], buckets: [Double] = []) {
        state.withLock { state in
            if let existing = state.families[name] {
                precondition(existing.kind == kind && existing.labelNames == labels, "metric \(name) is declared twice, differently")
                return
            }
            state.families[name] = Family(kind: kind, help: help, labelNames: labels, buckets: buckets)
            state.order.append(name)
        }
    }

    /// A counter (a name ending in `_total`): a value that only goes up.
    public func counter(_ name: String, help: String, labels: [String] = []) -> Counter {
        declare(name, .counter, help: help, labels: labels)
        return Counter(registry: self, name: name)
    }

    /// A gauge set by the code that knows its value.
    public func gauge(_ name: String, help: String, labels: [String] = []) -> Gauge {
        declare(name, .gauge, help: help, labels: labels)
        return Gauge(registry: self, name: name)
    }

    /// Runs `collect` before each scrape, for gauges whose values are read from elsewhere: one
    /// collector can read a source once and set several gauges from it.
    public func onScrape(_ collect: @escaping @Sendable () async -> Void) {
        state.withLock { $0.collectors.append(collect) }
    }

    /// A histogram of observations (seconds, sizes) in cumulative buckets.
    public func histogram(_ name: String, help: String, labels: [String] = [], buckets: [Double] = MetricsRegistry.latencyBuckets) -> Histogram {
        declare(name, .histogram, help: help, labels: labels, buckets: buckets.sorted())
        return Histogram(registry: self, name: name)
    }

    /// The current value of a counter's or gauge's series (0 when it has none).
    public func value(_ name: String, _ labels: [String] = []) -> Double {
        state.withLock { $0.families[name]?.values[labels] ?? 0 }
    }

    fileprivate func add(_ name: String, _ labels: [String], _ amount: Double) {
        state.withLock { $0.families[name]?.values[labels, default: 0] += amount }
    }

    fileprivate func set(_ name: String, _ labels: [String], _ value: Double) {
        state.withLock { $0.families[name]?.values[labels] = value }
    }

    fileprivate func observe(_ name: String, _ labels: [String], _ value: Double) {
        state.withLock { state in
            guard let buckets = state.families[name]?.buckets else { return }
            var series = state.families[name]?.histograms[labels] ?? HistogramSeries(counts: Array(repeating: 0, count: buckets.count))
            for (index, bound) in buckets.enumerated() where value <= bound { series.counts[index] += 1 }
            series.sum += value
            series.count += 1
            state.families[name]?.histograms[labels] = series
        }
    }

    /// Every family in the text exposition format, after the collectors have run.
    public func render() async -> String {
        for collect in state.withLock({ $0.collectors }) { await collect() }
        let snapshot = state.withLock { $0 }
        var text = ""
        for name in snapshot.order {
            guard let family = snapshot.families[name] else { continue }
            text += "# HELP \(name) \(Self.escapeHelp(family.help))\n# TYPE \(name) \(family.kind.rawValue)\n"
            switch family.kind {
            case .counter, .gauge:
                for labels in family.values.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                    text += "\(name)\(Self.labels(family.labelNames, labels)) \(Self.number(family.values[labels]!))\n"
                }
            case .histogram:
                for labels in family.histograms.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                    let series = family.histograms[labels]!
                    for (index, bound) in family.buckets.enumerated() {
                        text += "\(name)_bucket\(Self.labels(family.labelNames + ["le"], labels + [Self.number(bound)])) \(series.counts[index])\n"
                    }
                    text += "\(name)_bucket\(Self.labels(family.labelNames + ["le"], labels + ["+Inf"])) \(series.count)\n"
                    text += "\(name)_sum\(Self.labels(family.labelNames, labels)) \(Self.number(series.sum))\n"
                    text += "\(name)_count\(Self.labels(family.labelNames, labels)) \(series.count)\n"
                }
            }
        }
        return text
    }

    /// The content type of ``render()``'s text.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    private static func labels(_ names: [String], _ values: [String]) -> String {
        guard !names.isEmpty else { return "" }
        return "{" + zip(names, values).map { "\($0)=\"\(escapeValue($1))\"" }.joined(separator: ",") + "}"
    }

    private static func escapeValue(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n")
    }

    private static func escapeHelp(_ help: String) -> String {
        help.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
    }

    private static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}

/// A counter of a ``MetricsRegistry``.
public struct Counter: Sendable {
    fileprivate let registry: MetricsRegistry
    fileprivate let name: String

    /// Adds `amount` (1 unless given) to the series with these label values.
    public func increment(_ labels: [String] = [], by amount: Double = 1) { registry.add(name, labels, amount) }
}

/// A gauge of a ``MetricsRegistry``.
public struct Gauge: Sendable {
    fileprivate let registry: MetricsRegistry
    fileprivate let name: String

    public func set(_ value: Double, _ labels: [String] = []) { registry.set(name, labels, value) }
    public func add(_ amount: Double, _ labels: [String] = []) { registry.add(name, labels, amount) }
}

/// A histogram of a ``MetricsRegistry``.
public struct Histogram: Sendable {
    fileprivate let registry: MetricsRegistry
    fileprivate let name: String

    public func observe(_ value: Double, _ labels: [String] = []) { registry.observe(name, labels, value) }
}
