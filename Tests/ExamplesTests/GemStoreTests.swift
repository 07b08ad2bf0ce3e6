import Foundation
@testable import GemStore
import Testing

@Suite("Gem store: purchases through the store views, counted in Transaction.updates", .timeLimit(.minutes(10)))
struct GemStoreTests {
    @Test("gems bought through product views arrive through the updates listener once each; a plan bought through the subscription view becomes the current plan")
    @MainActor
    func visit() async throws {
        var lines: [String] = []
        let summary = try await GemStoreSession.run { lines.append($0) }
        #expect(summary == GemStoreSession.Summary(gems: 80, currentPlan: "com.example.shop.plus.standard.monthly", completions: 4))
        #expect(lines.contains { $0.contains("Standard (Monthly): Current Plan") && $0.contains("Premium (Monthly): Upgrade") })
    }
}
