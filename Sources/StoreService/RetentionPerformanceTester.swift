import AppStoreModels
import AppStoreSimulator
import Foundation
import HTTPClient
import SimulatorConnection
import ServiceLogging

/// Runs Initiate Performance Test's test: posts signed real-time requests to the developer's Get
/// Retention Message endpoint as the App Store would when a customer opens the subscription's page,
/// `maxConcurrentRequests` at a time, and records how many were answered well and how fast.
///
/// An answer counts when it is a `200` whose body is a `RealtimeResponseBody`, within the response
/// time limit; anything else is counted under Apple's `sendAttemptResult` names.
final class RetentionPerformanceTester: Sendable {
    let store: SimulatedAppStore
    let logger: Logger

    init(store: SimulatedAppStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    /// Starts `test` and returns; the result is recorded in the store when every request is answered.
    func run(_ test: RetentionPerformanceTest) {
        Task { [store, logger] in
            let result = await Self.measure(test, store: store)
            do { try await store.recordPerformanceTestResult(requestId: test.requestId, result) } catch {
                logger.error("the performance test's result could not be recorded", metadata: ["request_id": test.requestId, "error": "\(error)"])
            }
        }
    }

    /// One request's outcome: its time, and its failure's name when it failed.
    private struct Attempt: Sendable {
        var milliseconds: Int64
        var failure: String?
    }

    static func measure(_ test: RetentionPerformanceTest, store: SimulatedAppStore) async -> PerformanceTestResultResponse {
        let total = test.config.totalRequests ?? 0
        let concurrent = max(1, test.config.maxConcurrentRequests ?? 1)
        let limit = Duration.milliseconds(test.config.responseTimeThreshold ?? 700)
        let product = (try? await store.ledgerTransaction(UInt64(test.originalTransactionId) ?? 0))?.productID ?? ""
        var attempts: [Attempt] = []
        await withTaskGroup(of: Attempt.self) { group in
            var started = 0
            func startNext() {
                guard started < total else { return }
                started += 1
                group.addTask { await attempt(test, productID: product, store: store, limit: limit) }
            }
            for _ in 0..<concurrent { startNext() }
            for await attempt in group {
                attempts.append(attempt)
                startNext()
            }
        }
        let times = attempts.map(\.milliseconds).sorted()
        func percentile(_ p: Double) -> Int64 { times.isEmpty ? 0 : times[min(times.count - 1, Int((Double(times.count) * p).rounded(.up)) - 1)] }
        let succeeded = attempts.filter { $0.failure == nil }.count
        let successRate = total == 0 ? 0 : succeeded * 100 / total
        var failures: [String: Int] = [:]
        for attempt in attempts { if let failure = attempt.failure { failures[failure, default: 0] += 1 } }
        return PerformanceTestResultResponse(
            config: test.config, target: test.target, result: successRate >= (test.config.successRateThreshold ?? 100) ? .pass : .fail,
            successRate: successRate, numPending: 0,
            responseTimes: PerformanceTestResponseTimes(average: times.isEmpty ? 0 : times.reduce(0, +) / Int64(times.count),
                                                        p50: percentile(0.5), p90: percentile(0.9), p95: percentile(0.95), p99: percentile(0.99)),
            failures: failures)
    }

    private static func attempt(_ test: RetentionPerformanceTest, productID: String, store: SimulatedAppStore, limit: Duration) async -> Attempt {
        guard let url = URL(string: test.target) else { return Attempt(milliseconds: 0, failure: "OTHER") }
        let asked = await RealtimeRequest.ask(url, store: store, originalTransactionId: test.originalTransactionId, productID: productID,
                                              userLocale: "en-US", limit: limit)
        return Attempt(milliseconds: asked.milliseconds, failure: asked.failure)
    }
}
