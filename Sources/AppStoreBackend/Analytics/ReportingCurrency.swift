import Foundation
import ServiceLogging

/// One currency to report every amount in, beside the per-currency figures: what one unit of each
/// other currency is worth in it. The rates are the caller's (a file or a list; the backend fetches
/// none), and every answer says which it used.
public struct ReportingCurrency: Hashable, Sendable {
    /// An ISO 4217 code, upper case.
    public var currency: String
    /// Units of ``currency`` one unit of each currency is worth; ``currency`` itself is 1.
    public var rates: [String: Decimal]

    /// - Throws: `badRequest` naming a code that is not three letters or a rate that is not above 0.
    public init(currency: String, rates: [String: Decimal]) throws(BackendError) {
        let code = currency.uppercased()
        guard Self.isCode(code) else { throw .badRequest("the reporting currency is not an ISO 4217 code (three letters): \(currency)") }
        var checked: [String: Decimal] = [code: 1]
        for (other, rate) in rates {
            let otherCode = other.uppercased()
            guard Self.isCode(otherCode) else { throw .badRequest("a rate names \(other), which is not an ISO 4217 code (three letters)") }
            guard rate > 0 else { throw .badRequest("the rate of \(otherCode) must be above 0, not \(rate)") }
            if otherCode == code, rate != 1 { throw .badRequest("the rate of \(code) in itself is 1, not \(rate)") }
            checked[otherCode] = rate
        }
        self.currency = code
        self.rates = checked
    }

    /// Rates written `GBP:1.27,EUR:1.08` (an argument, a query), or a JSON object `{"GBP": 1.27}` (a file).
    ///
    /// Read strictly: a rate is a plain decimal (`1.27`, `0.0064`; no sign, exponent or trailing
    /// text, at most 9 digits before the point and 12 after), each code appears once (in any case),
    /// and anything else is refused naming the part that is wrong, never read as far as it goes.
    public init(currency: String, ratesText: String) throws(BackendError) {
        var rates: [String: Decimal] = [:]
        func add(_ code: String, _ rateText: String) throws(BackendError) {
            guard Self.isCode(code.uppercased()) else {
                throw .badRequest("a rate names \(UntrustedText.excerpt(code)), which is not an ISO 4217 code (three letters)")
            }
            guard rates[code.uppercased()] == nil else { throw .badRequest("the rate of \(code.uppercased()) is given twice") }
            rates[code.uppercased()] = try Self.rate(rateText, of: code.uppercased())
        }
        let text = ratesText.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.hasPrefix("{") {
            for (code, value) in try Self.flatObject(text) { try add(code, value) }
        } else if !text.isEmpty {
            for pair in text.split(separator: ",", omittingEmptySubsequences: false) {
                let parts = pair.split(separator: ":", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
                guard parts.count == 2 else {
                    throw .badRequest("a rate is written CODE:RATE (GBP:1.27), not \(UntrustedText.excerpt(String(pair)))")
                }
                try add(parts[0], parts[1])
            }
        }
        try self.init(currency: currency, rates: rates)
    }

    /// A rate as written: digits, at most one point, digits; above 0 and within the digits allowed.
    static func rate(_ text: String, of code: String) throws(BackendError) -> Decimal {
        let parts = text.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        let digits = { (part: Substring) in !part.isEmpty && part.allSatisfy { $0.isASCII && $0.isNumber } }
        guard (parts.count == 1 || parts.count == 2), parts.allSatisfy(digits),
              let rate = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
            throw .badRequest("the rate of \(code) is not a plain decimal number (1.27): \(UntrustedText.excerpt(text))")
        }
        guard parts[0].drop(while: { $0 == "0" }).count <= 9, parts.count == 1 || parts[1].count <= 12 else {
            throw .badRequest("the rate of \(code) has more than 9 digits before its point or 12 after: \(UntrustedText.excerpt(text))")
        }
        return rate
    }

    /// The members of a JSON object of names and numbers, in order and with any repeated name kept
    /// (a JSON parser keeps one of two equal names silently); the numbers as written.
    static func flatObject(_ text: String) throws(BackendError) -> [(String, String)] {
        let refused = BackendError.badRequest("the rates are not a JSON object of currency codes and numbers ({\"GBP\": 1.27}): \(UntrustedText.excerpt(text))")
        var members: [(String, String)] = []
        var rest = Substring(text)
        func skipSpace() { rest = rest.drop { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" } }
        func take(_ character: Character) -> Bool {
            skipSpace()
            guard rest.first == character else { return false }
            rest = rest.dropFirst()
            return true
        }
        guard take("{") else { throw refused }
        if take("}") { skipSpace(); guard rest.isEmpty else { throw refused }; return [] }
        repeat {
            guard take("\""), let close = rest.firstIndex(of: "\"") else { throw refused }
            let name = String(rest[..<close])
            guard !name.contains("\\") else { throw refused }
            rest = rest[rest.index(after: close)...]
            guard take(":") else { throw refused }
            skipSpace()
            let number = rest.prefix { !(",} \t\n\r".contains($0)) }
            guard !number.isEmpty else { throw refused }
            rest = rest[number.endIndex...]
            members.append((name, String(number)))
        } while take(",")
        guard take("}") else { throw refused }
        skipSpace()
        guard rest.isEmpty else { throw refused }
        return members
    }

    static func isCode(_ code: String) -> Bool { code.count == 3 && code.allSatisfy { $0.isASCII && $0.isUppercase } }

    /// Refuses a report holding a currency with no rate, naming it.
    public func check(_ currencies: Set<String>) throws(BackendError) {
        let missing = currencies.subtracting(rates.keys).sorted()
        guard missing.isEmpty else {
            throw .badRequest("no rate to \(currency) for \(missing.joined(separator: ", ")): give a rate for every currency the figures hold")
        }
    }

    /// The sum of `amounts` (exact, in units of each currency) in the reporting currency, exactly.
    public func exactTotal(_ amounts: [String: Decimal]) -> Decimal {
        amounts.reduce(Decimal(0)) { $0 + $1.value * (rates[$1.key] ?? 0) }
    }
}
