@testable import AppStoreBackend
import Foundation
import Testing

/// Cohort retention is rounded one way everywhere: the JSON carries the exact share and the whole
/// percent the tables show, rounded half up (2 of 3 is 67% in the CLI, the dashboard and the JSON).
@Suite struct CohortRoundingTests {
    @Test("2 of 3 is 67% and 1 of 3 is 33%, half up; the JSON carries the exact share beside the percent")
    func roundedOneWay() throws {
        let cohort = CohortReport.Cohort(month: try #require(CalendarDay("2026-03-01")), subscriptions: 3, retained: [2, 1, 0, 3])
        #expect(cohort.retentionPercent == [67, 33, 0, 100])
        #expect(CohortReport.Cohort(month: cohort.month, subscriptions: 8, retained: [1, 3, 5]).retentionPercent == [13, 38, 63], "halves go up")
        let report = CohortReport(asOf: Date(timeIntervalSince1970: 1_767_225_600), cohorts: [cohort])
        let json = try #require(try JSONSerialization.jsonObject(with: try report.json()) as? [String: Any])
        let row = try #require((json["cohorts"] as? [[String: Any]])?.first)
        #expect(row["retention_percent"] as? [Int] == [67, 33, 0, 100])
        let exact = try #require(row["retention"] as? [Double])
        #expect(exact.count == 4 && abs(exact[0] - 2.0 / 3.0) < 1e-12 && exact[3] == 1)
    }
}
