import Foundation

/// How instants fall on days for the subscription figures: UTC (the default), or the local days of a
/// named time zone (App Store Connect reports by Pacific time days), daylight saving time included.
/// A backend's database keeps one (`storekit backend metrics rebuild --time-zone`), and its rollups
/// are kept in it.
public struct ReportingCalendar: Hashable, Sendable {
    /// The zone's identifier (`UTC`, `America/Los_Angeles`).
    public let identifier: String
    private let zone: TimeZone

    public static let utc = ReportingCalendar(checked: "UTC", zone: TimeZone(identifier: "UTC")!)

    /// - Throws: `badRequest` naming an identifier that is not a time zone of the tz database.
    public init(timeZone identifier: String) throws(BackendError) {
        guard !identifier.isEmpty, let zone = TimeZone(identifier: identifier) else {
            throw .badRequest("\(identifier) is not a time zone of the tz database (UTC, America/Los_Angeles, Europe/Paris)")
        }
        self.init(checked: identifier, zone: zone)
    }

    private init(checked identifier: String, zone: TimeZone) {
        self.identifier = identifier
        self.zone = zone
    }

    public static func == (lhs: ReportingCalendar, rhs: ReportingCalendar) -> Bool { lhs.identifier == rhs.identifier }
    public func hash(into hasher: inout Hasher) { hasher.combine(identifier) }

    /// The zone's offset from UTC at an instant, in milliseconds (no lookup for UTC, the common case,
    /// asked for every day of every subscription's contribution).
    private func offset(at milliseconds: Int64) -> Int64 {
        guard identifier != "UTC" else { return 0 }
        return Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(milliseconds) / 1_000))) * 1_000
    }

    /// The local day an instant (milliseconds since 1970) falls on.
    public func day(_ milliseconds: Int64) -> CalendarDay { CalendarDay(milliseconds: milliseconds + offset(at: milliseconds)) }

    /// The instant a local day begins (its midnight, or the first instant after it where a change of
    /// offset skips midnight).
    public func start(of day: CalendarDay) -> Int64 {
        let local = day.startMilliseconds
        let guess = local - offset(at: local)
        let instant = local - offset(at: guess)
        return self.day(instant) == day ? instant : guess
    }

    /// The last millisecond of a local day: where its stock figures are taken.
    public func lastMilliseconds(of day: CalendarDay) -> Int64 { start(of: day.adding(days: 1)) - 1 }
}
