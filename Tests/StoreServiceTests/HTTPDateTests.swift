import Foundation
import HTTPClient
import Testing

/// HTTP's `Date` format, which the store's Server API answers state its clock in and the backend
/// reads the App Store's time from.
@Suite struct HTTPDateTests {
    @Test("IMF-fixdate both ways, to the second; other forms read as nothing")
    func imfFixdate() {
        let date = Date(timeIntervalSince1970: 784_111_777.75)
        #expect(HTTPDate.string(from: date) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.date(from: "Sun, 06 Nov 1994 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
        #expect(HTTPDate.string(from: Date(timeIntervalSince1970: 1_767_225_600)) == "Thu, 01 Jan 2026 00:00:00 GMT")
        for other in ["Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 1994 08:49 GMT", ""] {
            #expect(HTTPDate.date(from: other) == nil, "\(other)")
        }
        for seconds in stride(from: 0.0, to: 4_000_000_000, by: 97_654_321) {
            let whole = Date(timeIntervalSince1970: seconds)
            #expect(HTTPDate.date(from: HTTPDate.string(from: whole)) == whole)
        }
    }
}
