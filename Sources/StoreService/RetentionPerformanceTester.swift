import AppStoreModels
import AppStoreSimulator
import Foundation
import HTTPClient
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

/// A real-time request as the App Store posts it: `{"signedPayload": JWS}`, a fresh request
/// identifier each time.
struct RealtimeRequest: Sendable {
    let requestIdentifier: String
    let body: Data

    static func make(store: SimulatedAppStore, originalTransactionId: String, productID: String, userLocale: String) async throws -> RealtimeRequest {
        let now = try await store.currentTime()
        let signed = try store.signedRealtimeRequest(originalTransactionId: originalTransactionId, productId: productID, userLocale: userLocale, at: now)
        return RealtimeRequest(requestIdentifier: signed.requestIdentifier,
                               body: try JSONEncoder().encode(RealtimeRequestBody(signedPayload: signed.signedPayload)))
    }
}

extension RealtimeRequest {
    /// What a developer's Get Retention Message endpoint answered: its `RealtimeResponseBody`, or the
    /// `sendAttemptResult` name of why there is none, and how long it took. An answer later than
    /// `limit` is not waited for (`TIMED_OUT`), so the customer's page never waits longer.
    static func ask(_ url: URL, store: SimulatedAppStore, originalTransactionId: String, productID: String, userLocale: String,
                    limit: Duration) async -> (answer: RealtimeResponseBody?, failure: String?, milliseconds: Int64) {
        let started = ContinuousClock.now
        func elapsed() -> Int64 { Int64((ContinuousClock.now - started) / .milliseconds(1)) }
        let outcome = await withTaskGroup(of: (RealtimeResponseBody?, String?).self) { group in
            group.addTask {
                do {
                    let request = try await make(store: store, originalTransactionId: originalTransactionId, productID: productID, userLocale: userLocale)
                    // Foundation's client on Linux keeps whole seconds of a timeout; the race below keeps the limit.
                    let answer = try await HTTPClient.shared.send(.json("POST", url, body: request.body, timeout: max(limit, .seconds(1))))
                    guard answer.status == 200 else { return (nil, "UNSUCCESSFUL_HTTP_RESPONSE_CODE") }
                    guard let body = try? JSONDecoder().decode(RealtimeResponseBody.self, from: answer.body) else { return (nil, "INVALID_RESPONSE") }
                    return (body, nil)
                } catch HTTPClient.Failure.timedOut {
                    return (nil, "TIMED_OUT")
                } catch HTTPClient.Failure.unreachable {
                    return (nil, "NO_RESPONSE")
                } catch {
                    return (nil, Task.isCancelled ? "TIMED_OUT" : "OTHER")
                }
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                return (nil, "TIMED_OUT")
            }
            let first = await group.next() ?? (nil, "OTHER")
            group.cancelAll()
            return first
        }
        guard elapsed() <= Int64(limit / .milliseconds(1)) || outcome.1 != nil else { return (nil, "TIMED_OUT", elapsed()) }
        return (outcome.0, outcome.1, elapsed())
    }
}
