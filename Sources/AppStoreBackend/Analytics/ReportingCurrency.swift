import Foundation

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
    public init(currency: String, ratesText: String) throws(BackendError) {
        var rates: [String: Decimal] = [:]
        let text = ratesText.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.hasPrefix("{") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
                throw .badRequest("the rates are not a JSON object of currency codes and numbers: \(text.prefix(80))")
            }
            for (code, value) in object {
                guard let number = value as? NSNumber, let rate = Decimal(string: number.stringValue, locale: Locale(identifier: "en_US_POSIX")) else {
                    throw .badRequest("the rate of \(code) is not a number")
                }
                rates[code] = rate
            }
        } else if !text.isEmpty {
            for pair in text.split(separator: ",") {
                let parts = pair.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard parts.count == 2, let rate = Decimal(string: parts[1], locale: Locale(identifier: "en_US_POSIX")) else {
                    throw .badRequest("a rate is written CODE:RATE (GBP:1.27), not \(pair)")
                }
                rates[parts[0]] = rate
            }
        }
        try self.init(currency: currency, rates: rates)
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
