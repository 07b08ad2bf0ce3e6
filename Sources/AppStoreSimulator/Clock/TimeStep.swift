import Foundation
import StoreKitCatalog

/// A length of simulated time: ISO 8601 (`P1M`, `P3D`, `PT12H`, `P1Y2M`) or short (`3d`, `1M`, `2w`, `12h`, `30m`, `45s`, `1y`).
public struct TimeStep: Hashable, Sendable, CustomStringConvertible {
    public var years = 0, months = 0, weeks = 0, days = 0, hours = 0, minutes = 0, seconds = 0
    public let text: String

    /// Parses a step, or returns `nil` for text that is not one.
    public init?(_ text: String) {
        self.text = text
        if text.hasPrefix("P") {
            var inTime = false
            var number = ""
            var any = false
            for character in text.dropFirst() {
                if character == "T" { inTime = true; continue }
                if character.isNumber { number.append(character); continue }
                guard let value = Int(number), (0...Self.largestComponent).contains(value) else { return nil }
                number = ""
                any = true
                switch (character, inTime) {
                case ("Y", false): years = value
                case ("M", false): months = value
                case ("W", false): weeks = value
                case ("D", false): days = value
                case ("H", true): hours = value
                case ("M", true): minutes = value
                case ("S", true): seconds = value
                default: return nil
                }
            }
            guard any, number.isEmpty else { return nil }
        } else {
            guard let unit = text.last, let value = Int(text.dropLast()), (0...Self.largestComponent).contains(value) else { return nil }
            switch unit {
            case "y": years = value
            case "M": months = value
            case "w": weeks = value
            case "d": days = value
            case "h": hours = value
            case "m": minutes = value
            case "s": seconds = value
            default: return nil
            }
        }
    }

    /// The instant this step after `start`, in calendar terms (UTC).
    public func date(after start: Date) -> Date {
        var components = DateComponents()
        components.year = years
        components.month = months
        components.day = days + 7 * weeks
        components.hour = hours
        components.minute = minutes
        components.second = seconds
        // A step the calendar cannot take lands past every date a store accepts, so advancing refuses it.
        return SubscriptionPeriod.renewalCalendar.date(byAdding: components, to: start) ?? .distantFuture
    }

    public var description: String { text }

    /// No component is larger than ten thousand years in seconds: anything more cannot move a store
    /// that ends in year 9999, and larger numbers would overflow the calendar arithmetic.
    static let largestComponent = 315_576_000_000
}
