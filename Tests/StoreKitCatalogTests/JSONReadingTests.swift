import AppStoreModels
import Foundation
import StoreKitCatalog
import Testing

/// The byte-level JSON reader behind `.storekit` files: escapes, numbers, and located failures.
@Suite(.timeLimit(.minutes(10)))
struct JSONReadingTests {
    static func read(_ json: String) throws(ConfigurationError) -> StoreKitConfiguration {
        try StoreKitConfiguration.read(Data(json.utf8), fileName: "t.storekit").configuration
    }

    @Test("escapes, surrogate pairs and non-ASCII text decode exactly")
    func strings() throws {
        let configuration = try Self.read(#"{"identifier": "a\"b\\c\/d\n\u00e9\ud83d\ude00 é✨"}"#)
        #expect(configuration.identifier == "a\"b\\c/d\né😀 é✨")
    }

    @Test("integers stay integers and fractions stay numbers")
    func numbers() throws {
        let configuration = try Self.read(#"{"settings": {"_timeRate": 1005, "_lastSynchronizedDate": 743722291.470198}, "x": [-0, 1e3, -2.5E-1]}"#)
        #expect(configuration.settings?.timeRate == 1005)
        #expect(configuration.settings?.lastSynchronizedDate == 743_722_291.470198)
        #expect(configuration.additionalFields["x"] == .array([.integer(0), .number(1000), .number(-0.25)]))
    }

    @Test("broken JSON is reported with its line and column", arguments: [
        ("{\n  \"a\": tru\n}", "unknown literal, expected true at line 2, column 8"),
        ("{\"a\": 1,}", "expected a string key at line 1, column 9"),
        ("{\"a\" 1}", "expected ':' after a key at line 1, column 6"),
        ("[01]", "expected ',' or ']' in an array at line 1, column 3"),
        ("{\"a\": \"\\ud800\"}", "a lone UTF-16 surrogate in a string"),
        ("{\"a\": \"tab\there\"}", "a control character inside a string"),
        ("{} {}", "unexpected text after the JSON value"),
        (String(repeating: "[", count: 600) + String(repeating: "]", count: 600), "nested more than 512 levels deep"),
    ])
    func located(json: String, expected: String) {
        #expect {
            try Self.read(json)
        } throws: { error in
            guard let error = error as? ConfigurationError else { return false }
            return error.problems.count == 1 && error.problems[0].message.contains(expected)
        }
    }
}
