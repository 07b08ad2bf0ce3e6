import Foundation

/// A subscription or offer period: a count of days, weeks, months or years, written in ISO 8601
/// as `P3D`, `P1W`, `P1M`, `P6M`, `P1Y`.
public struct SubscriptionPeriod: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The unit of a period.
    public enum Unit: String, Hashable, Sendable, Codable, CaseIterable {
        case day, week, month, year

        /// The ISO 8601 designator: `D`, `W`, `M`, `Y`.
        public var designator: Character {
            switch self {
            case .day: return "D"
            case .week: return "W"
            case .month: return "M"
            case .year: return "Y"
            }
        }
    }

    /// How many units, at least 1.
    public var value: Int
    public var unit: Unit

    public init(value: Int, unit: Unit) {
        precondition(value >= 1, "a subscription period lasts at least one unit")
        self.value = value
        self.unit = unit
    }

    public static func days(_ count: Int) -> SubscriptionPeriod { SubscriptionPeriod(value: count, unit: .day) }
    public static func weeks(_ count: Int) -> SubscriptionPeriod { SubscriptionPeriod(value: count, unit: .week) }
    public static func months(_ count: Int) -> SubscriptionPeriod { SubscriptionPeriod(value: count, unit: .month) }
    public static func years(_ count: Int) -> SubscriptionPeriod { SubscriptionPeriod(value: count, unit: .year) }

    /// Parses `P` + a positive count + one of `D`, `W`, `M`, `Y`; `nil` for anything else.
    public init?(iso8601 text: String) {
        let characters = Array(text)
        guard characters.count >= 3, characters.first == "P", let designator = characters.last,
              let unit = Unit.allCases.first(where: { $0.designator == designator })
        else { return nil }
        let digits = characters.dropFirst().dropLast()
        guard digits.allSatisfy(\.isASCIIDigit), digits.count <= 4, let value = Int(String(digits)), value >= 1 else { return nil }
        self.init(value: value, unit: unit)
    }

    /// The ISO 8601 form, such as `P1M`.
    public var iso8601: String { "P\(value)\(unit.designator)" }

    public var description: String { iso8601 }

    /// The same period as a count of days, for comparing lengths (a month counts 30 days, a year 365).
    public var approximateDays: Int {
        switch unit {
        case .day: return value
        case .week: return value * 7
        case .month: return value * 30
        case .year: return value * 365
        }
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let period = SubscriptionPeriod(iso8601: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not an ISO 8601 period: \(text)"))
        }
        self = period
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(iso8601)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
