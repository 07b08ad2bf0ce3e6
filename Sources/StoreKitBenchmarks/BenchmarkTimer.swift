import AppStoreModels
import Foundation
import StoreKitCommands

/// Measures how many times per second an operation runs, on this thread.
///
/// The benchmark's own wall clock is the one place the tool reads real time: it measures, it does not
/// decide anything.
enum BenchmarkTimer {
    /// Runs `body` repeatedly for about `seconds` (after a short warm-up) and returns runs per second.
    static func rate(seconds: Double, _ body: () throws -> Void) rethrows -> Double {
        for _ in 0..<50 { try body() }
        let clock = ContinuousClock()
        var runs = 0
        let start = clock.now
        var elapsed = Duration.zero
        repeat {
            for _ in 0..<50 { try body() }
            runs += 50
            elapsed = clock.now - start
        } while elapsed < .milliseconds(Int64(seconds * 1000))
        return Double(runs) / elapsed.seconds
    }
}

extension BenchmarkTimer {
    /// Runs an asynchronous `body` repeatedly for about `seconds` (after a short warm-up) and returns runs per second.
    static func rate(seconds: Double, _ body: () async throws -> Void) async rethrows -> Double {
        for _ in 0..<20 { try await body() }
        let clock = ContinuousClock()
        var runs = 0
        let start = clock.now
        var elapsed = Duration.zero
        repeat {
            for _ in 0..<20 { try await body() }
            runs += 20
            elapsed = clock.now - start
        } while elapsed < .milliseconds(Int64(seconds * 1000))
        return Double(runs) / elapsed.seconds
    }
}

extension Array where Element == Double {
    /// The middle value (the mean of the two middle values for an even count); 0 when empty.
    var median: Double {
        let sorted = self.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted.count.isMultiple(of: 2) ? (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2 : sorted[sorted.count / 2]
    }
}

extension Double {
    /// Rounded to three decimals, as the reports print ratios.
    var thousandths: Double { (self * 1000).rounded() / 1000 }
    /// Rounded to two decimals (mean counts).
    var hundredths: Double { (self * 100).rounded() / 100 }
    /// Rounded to one decimal (percentages).
    var tenths: Double { (self * 10).rounded() / 10 }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double { self / .seconds(1) }
}

/// The benchmarks' one sample transaction: a monthly subscription's renewal as the store signs it.
enum BenchmarkSample {
    static var transaction: JWSTransactionDecodedPayload {
        var transaction = JWSTransactionDecodedPayload()
        transaction.transactionId = "2000000000000002"
        transaction.originalTransactionId = "2000000000000001"
        transaction.bundleId = "com.example.bench"
        transaction.productId = "bench.monthly"
        transaction.type = .autoRenewableSubscription
        transaction.transactionReason = .renewal
        transaction.environment = .sandbox
        transaction.purchaseDate = Date(timeIntervalSince1970: 1_767_225_600)
        transaction.expiresDate = Date(timeIntervalSince1970: 1_769_904_000)
        transaction.signedDate = Date(timeIntervalSince1970: 1_767_225_600)
        transaction.storefront = "USA"
        transaction.storefrontId = "143441"
        transaction.price = 9_990
        transaction.currency = "USD"
        return transaction
    }
}

extension BenchmarkTimer {
    /// Microseconds per run of `body`, over about `seconds`.
    static func microseconds(seconds: Double, _ body: () throws -> Void) rethrows -> Double {
        1_000_000 / (try rate(seconds: seconds, body))
    }
}

/// One benchmark result line: named rates and ratios, printed as JSON or as a table.
struct BenchmarkReport {
    var name: String
    var entries: [(key: String, value: Any)] = []

    mutating func add(_ key: String, _ value: Any) { entries.append((key, value)) }

    func render(json: Bool) throws(CommandFailure) -> String {
        if json {
            var object: [String: Any] = ["benchmark": name]
            for (key, value) in entries { object[key] = value }
            return try PrettyJSON.string(from: object)
        }
        let width = entries.map(\.key.count).max() ?? 0
        return ([name] + entries.map { entry in
            let value: String
            if let number = entry.value as? Double { value = String(format: number < 10 ? "%.3f" : "%.0f", number) } else { value = "\(entry.value)" }
            return "  " + entry.key.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + value
        }).joined(separator: "\n")
    }
}
