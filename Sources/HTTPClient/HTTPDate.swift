import Foundation

/// HTTP's date format (RFC 9110's IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`): what a server's
/// `Date` header states as its current time, to the second.
public enum HTTPDate {
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "GMT")!
        return calendar
    }()

    /// `date` in IMF-fixdate, its fraction of a second dropped.
    public static func string(from date: Date) -> String {
        let parts = calendar.dateComponents([.weekday, .day, .month, .year, .hour, .minute, .second], from: date)
        func two(_ value: Int?) -> String { let value = value ?? 0; return value < 10 ? "0\(value)" : "\(value)" }
        return "\(weekdays[(parts.weekday ?? 1) - 1]), \(two(parts.day)) \(months[(parts.month ?? 1) - 1]) \(parts.year ?? 1970) "
            + "\(two(parts.hour)):\(two(parts.minute)):\(two(parts.second)) GMT"
    }

    /// The date an IMF-fixdate names; `nil` for anything else (HTTP's obsolete formats included).
    public static func date(from text: String) -> Date? {
        let fields = text.split(separator: " ")
        guard fields.count == 6, fields[0].hasSuffix(","), fields[5] == "GMT", let day = Int(fields[1]),
              let month = months.firstIndex(of: String(fields[2])), let year = Int(fields[3]) else { return nil }
        let time = fields[4].split(separator: ":").compactMap { Int($0) }
        guard time.count == 3 else { return nil }
        let components = DateComponents(year: year, month: month + 1, day: day, hour: time[0], minute: time[1], second: time[2])
        return calendar.date(from: components)
    }
}
