import AppStoreModels
import AppStoreSimulator
import Foundation
import OpenStoreKit
@testable import StoreService
import Testing

/// A storage failure reaches the HTTP layer typed, and its status is chosen by its reason, never by
/// reading its message: a database that is away is `503` with `Retry-After` (try again), a full disk
/// `507`, anything else `500`; the reason crosses the device API intact.
@Suite
struct StorageFailureAnswerTests {
    @Test("each storage failure reason has its status; the device API's body carries the reason back to the client", arguments: StorageFailure.Reason.allCases)
    func statusByReason(_ reason: StorageFailure.Reason) throws {
        // A message that reads like another reason must not change the answer.
        let failure = StorageFailure(reason, "storage: disk full, server unavailable, read-only")
        let answer = APIError(AppStoreError.storage(failure))
        let expected = [StorageFailure.Reason.unavailable: 503, .full: 507][reason] ?? 500
        #expect(answer.status == expected)
        #expect(answer.headers.contains { $0.name == "Retry-After" } == (reason == .unavailable))
        #expect(answer.body.error.family == "storage")
        #expect(answer.body.error.code == reason.rawValue)
        let decoded = try JSONDecoder().decode(DeviceAPI.ErrorBody.self, from: try JSONEncoder().encode(answer.body))
        #expect(decoded.transportError == .storage(failure))
    }
}
