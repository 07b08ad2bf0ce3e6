import Foundation

// Subscription periods as words: what StoreKit's `subscriptionPeriodFormatStyle` and
// `subscriptionPeriodUnitFormatStyle` give, with `formatted(_:referenceDate:)` and `formatted(_:)`.
//
// On Apple platforms `subscriptionPeriodFormatStyle` is a `Date.ComponentsFormatStyle`. Foundation on
// Linux declares that type without a way to make one or to format with it, so here the period style is
// ``Product/SubscriptionPeriod/FormatStyle``, a format style of date ranges with the same `style` and
// `locale`. Code that passes the product's style to `formatted` compiles and reads the same either way.
// Numbers follow the locale; unit names are English, as this package carries no translations.

extension Product.SubscriptionPeriod.Unit: Comparable {
    /// Shorter units first: a day, a week, a month, a year.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

extension Product.SubscriptionPeriod {
    /// The dates the period covers when it starts at `referenceDate`, in the Gregorian calendar.
    public func dateRange(referenceDate: Date = .now) -> Range<Date> {
        let calendar = Calendar(identifier: .gregorian)
        let end = calendar.date(byAdding: DateComponents(subscriptionPeriod: self), to: referenceDate) ?? referenceDate
        return referenceDate..<max(end, referenceDate)
    }

    /// The period in words, such as "one month", with a format style of date ranges such as
    /// ``Product/subscriptionPeriodFormatStyle``.
    public func formatted<S: Foundation.FormatStyle>(_ format: S, referenceDate: Date = .now) -> S.FormatOutput where S.FormatInput == Range<Date> {
        format.format(dateRange(referenceDate: referenceDate))
    }

    /// The period as a length of time, with a format style of durations (`Duration.UnitsFormatStyle`).
    public func formatted<S: Foundation.FormatStyle>(_ format: S, referenceDate: Date = .now) -> S.FormatOutput where S.FormatInput == Duration {
        let range = dateRange(referenceDate: referenceDate)
        return format.format(.milliseconds(Int64((range.upperBound.timeIntervalSince(range.lowerBound) * 1000).rounded())))
    }

    /// How a period's date range is written: the largest whole units it spans, such as "one month"
    /// (spelled out), "1 month" (wide), "1 mth" (abbreviated), "1mth" (condensed) or "1m" (narrow).
    public struct FormatStyle: Foundation.FormatStyle, Codable, Hashable, Sendable {
        /// How units are written, as `Date.ComponentsFormatStyle.Style` names them.
        public enum Style: String, Codable, Hashable, Sendable, CaseIterable {
            case wide, abbreviated, condensedAbbreviated, narrow, spellOut
        }

        public var style: Style
        public var locale: Locale
        public var calendar: Calendar

        public init(style: Style, locale: Locale = .autoupdatingCurrent, calendar: Calendar = Calendar(identifier: .gregorian)) {
            self.style = style
            self.locale = locale
            self.calendar = calendar
        }

        /// The same style in another locale.
        public func locale(_ locale: Locale) -> Self {
            var copy = self
            copy.locale = locale
            return copy
        }

        public func format(_ range: Range<Date>) -> String {
            let fields: [(Calendar.Component, PeriodWord)] = [
                (.year, .year), (.month, .month), (.weekOfMonth, .week), (.day, .day), (.hour, .hour), (.minute, .minute), (.second, .second),
            ]
            let components = calendar.dateComponents(Set(fields.map(\.0)), from: range.lowerBound, to: range.upperBound)
            let parts = fields.compactMap { field, word -> String? in
                guard let count = components.value(for: field), count > 0 else { return nil }
                return word.phrase(count, style: style, locale: locale)
            }
            return parts.isEmpty ? PeriodWord.day.phrase(0, style: style, locale: locale) : parts.joined(separator: ", ")
        }
    }
}

extension Product.SubscriptionPeriod.Unit {
    /// How a unit is written alone, such as "month": ``Product/subscriptionPeriodUnitFormatStyle``.
    public struct FormatStyle: Foundation.FormatStyle, Codable, Hashable, Sendable {
        var locale: Locale

        init(locale: Locale) {
            self.locale = locale
        }

        public func format(_ value: Product.SubscriptionPeriod.Unit) -> String {
            PeriodWord(value).singular(style: .wide)
        }

        /// The same style in another locale.
        public func locale(_ locale: Locale) -> Self {
            Self(locale: locale)
        }
    }

    /// The unit in words, such as "month", with ``Product/subscriptionPeriodUnitFormatStyle``.
    public func formatted<S: Foundation.FormatStyle>(_ format: S) -> S.FormatOutput where S.FormatInput == Self {
        format.format(self)
    }
}

extension Product {
    /// How to write this product's subscription period, in the locale of its storefront:
    /// `period.formatted(product.subscriptionPeriodFormatStyle)` reads "one month".
    public var subscriptionPeriodFormatStyle: SubscriptionPeriod.FormatStyle {
        SubscriptionPeriod.FormatStyle(style: .spellOut, locale: priceFormatStyle.locale)
    }

    /// How to write a unit of this product's subscription period alone:
    /// `unit.formatted(product.subscriptionPeriodUnitFormatStyle)` reads "month".
    public var subscriptionPeriodUnitFormatStyle: SubscriptionPeriod.Unit.FormatStyle {
        SubscriptionPeriod.Unit.FormatStyle(locale: priceFormatStyle.locale)
    }
}

extension DateComponents {
    /// The components that add one subscription period to a date (weeks as weeks of the year).
    public init(subscriptionPeriod period: Product.SubscriptionPeriod) {
        switch period.unit {
        case .day: self.init(day: period.value)
        case .week: self.init(weekOfYear: period.value)
        case .month: self.init(month: period.value)
        case .year: self.init(year: period.value)
        }
    }
}

/// A unit of time as a word, in each of the format styles' widths.
enum PeriodWord: Sendable {
    case year, month, week, day, hour, minute, second

    init(_ unit: Product.SubscriptionPeriod.Unit) {
        switch unit {
        case .day: self = .day
        case .week: self = .week
        case .month: self = .month
        case .year: self = .year
        }
    }

    /// Singular and plural forms for each style but `spellOut`, which uses the wide words.
    private var forms: (wide: (String, String), abbreviated: (String, String), narrow: String) {
        switch self {
        case .year: return (("year", "years"), ("yr", "yrs"), "y")
        case .month: return (("month", "months"), ("mth", "mths"), "m")
        case .week: return (("week", "weeks"), ("wk", "wks"), "w")
        case .day: return (("day", "days"), ("day", "days"), "d")
        case .hour: return (("hour", "hours"), ("hr", "hr"), "h")
        case .minute: return (("minute", "minutes"), ("min", "min"), "m")
        case .second: return (("second", "seconds"), ("sec", "sec"), "s")
        }
    }

    func singular(style: Product.SubscriptionPeriod.FormatStyle.Style) -> String {
        word(for: 1, style: style)
    }

    private func word(for count: Int, style: Product.SubscriptionPeriod.FormatStyle.Style) -> String {
        let forms = self.forms
        switch style {
        case .wide, .spellOut: return count == 1 ? forms.wide.0 : forms.wide.1
        case .abbreviated, .condensedAbbreviated: return count == 1 ? forms.abbreviated.0 : forms.abbreviated.1
        case .narrow: return forms.narrow
        }
    }

    /// `count` of this unit, such as "two weeks", "2 weeks", "2 wks", "2wks" or "2w".
    func phrase(_ count: Int, style: Product.SubscriptionPeriod.FormatStyle.Style, locale: Locale) -> String {
        let word = self.word(for: count, style: style)
        switch style {
        case .spellOut:
            let speller = NumberFormatter()
            speller.numberStyle = .spellOut
            speller.locale = locale
            return "\(speller.string(from: NSNumber(value: count)) ?? String(count)) \(word)"
        case .wide, .abbreviated: return "\(count.formatted(.number.locale(locale))) \(word)"
        case .condensedAbbreviated, .narrow: return "\(count.formatted(.number.locale(locale)))\(word)"
        }
    }
}
