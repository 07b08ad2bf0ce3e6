import AppStoreModels
import Foundation
import StoreKitCatalog
import Testing

@Suite(.timeLimit(.minutes(10)))
struct ConfigurationValidationTests {
    static func problems(_ json: String, fileName: String = "Broken.storekit") -> [String] {
        do {
            _ = try StoreKitConfiguration.read(Data(json.utf8), fileName: fileName)
            return []
        } catch {
            return error.description.split(separator: "\n").map(String.init)
        }
    }

    @Test("every problem is reported in one pass with the file name and JSON path")
    func allProblemsInOnePass() {
        let lines = Self.problems("""
        {"products": [
           {"productID": "gems", "type": "Consumable", "displayPrice": "0.99"},
           {"productID": "gems", "type": "Consumable", "displayPrice": "1,99"},
           {"productID": "hat", "type": "Wearable", "displayPrice": "1.99"}],
         "subscriptionGroups": [{"id": "G1", "subscriptions": [
           {"productID": "plus", "groupNumber": 1, "displayPrice": "4.99", "recurringSubscriptionPeriod": "P1M"},
           {"productID": "pro", "groupNumber": 0, "displayPrice": "9.99", "recurringSubscriptionPeriod": "P1X",
            "introductoryOffer": {"paymentMode": "halfOff", "subscriptionPeriod": "P1W"}}]}]}
        """)
        #expect(lines.contains("Broken.storekit: products[1].productID: duplicate product ID \"gems\", first declared at products[0]"))
        #expect(lines.contains("Broken.storekit: products[1].displayPrice: expected a decimal price such as \"0.99\", found \"1,99\""))
        #expect(lines.contains("Broken.storekit: products[2].type: unknown product type \"Wearable\"; expected Consumable or NonConsumable"))
        #expect(lines.contains("Broken.storekit: subscriptionGroups[0].subscriptions[1].recurringSubscriptionPeriod: expected an ISO 8601 period such as P3D, P1W, P1M or P1Y, found \"P1X\""))
        #expect(lines.contains("Broken.storekit: subscriptionGroups[0].subscriptions[1].groupNumber: the level must be 1 (highest) or more, found 0"))
        #expect(lines.contains("Broken.storekit: subscriptionGroups[0].subscriptions[1].introductoryOffer.paymentMode: unknown payment mode \"halfOff\"; expected free, payAsYouGo or payUpFront"))
        #expect(lines.count == 6)
    }

    @Test("values of the wrong type are reported where they are, and reading goes on")
    func wrongTypes() {
        let lines = Self.problems("""
        {"settings": {"_askToBuyEnabled": "yes", "_timeRate": "fast"},
         "products": [{"productID": 7, "type": "Consumable", "displayPrice": "0.99", "localizations": {}}]}
        """)
        #expect(lines.contains("Broken.storekit: settings._askToBuyEnabled: expected true or false, found the string \"yes\""))
        #expect(lines.contains("Broken.storekit: settings._timeRate: expected a whole number, found the string \"fast\""))
        #expect(lines.contains("Broken.storekit: products[0].productID: expected a string, found a number"))
        #expect(lines.contains("Broken.storekit: products[0].localizations: expected an array, found an object"))
    }

    @Test("a truncated or non-JSON file is one clear error", arguments: [
        ("{\"products\": [{\"productID\": \"gems\"", "not a StoreKit configuration: not valid JSON"),
        ("<plist></plist>", "not a StoreKit configuration: not valid JSON"),
        ("", "not a StoreKit configuration: the file is empty"),
        ("[1, 2, 3]", "(top level): expected an object, found an array"),
    ])
    func unreadable(json: String, expected: String) {
        let lines = Self.problems(json)
        #expect(lines.count == 1)
        #expect(lines.first?.contains(expected) == true, "\(lines)")
    }

    @Test("offer problems: missing offer IDs, duplicate codes, bad eligibility, paid offers without prices")
    func offerProblems() {
        let lines = Self.problems("""
        {"subscriptionGroups": [{"id": "G", "subscriptions": [{"productID": "m", "groupNumber": 1, "displayPrice": "1.99",
          "recurringSubscriptionPeriod": "P1M",
          "adHocOffers": [{"paymentMode": "free", "subscriptionPeriod": "P1M"}],
          "codeOffers": [{"referenceName": "A", "paymentMode": "free", "subscriptionPeriod": "P1M", "eligibility": ["everyone"]},
                         {"referenceName": "A", "paymentMode": "payUpFront", "subscriptionPeriod": "P1M"}],
          "winbackOffers": [{"offerID": "w", "paymentMode": "payAsYouGo", "subscriptionPeriod": "P1M", "numberOfPeriods": 0, "displayPrice": "0.5"}]}]}]}
        """)
        let base = "Broken.storekit: subscriptionGroups[0].subscriptions[0]"
        #expect(lines.contains("\(base).adHocOffers[0].offerID: missing offer ID; apps select promotional offers by it"))
        #expect(lines.contains("\(base).codeOffers[0].eligibility: unknown eligibility \"everyone\"; expected new, existing or expired"))
        #expect(lines.contains("\(base).codeOffers[1].referenceName: duplicate offer code reference name \"A\", first declared at subscriptionGroups[0].subscriptions[0].codeOffers[0]"))
        #expect(lines.contains("\(base).codeOffers[1].displayPrice: missing price; expected a decimal such as \"0.99\""))
        #expect(lines.contains("\(base).winbackOffers[0].numberOfPeriods: the number of periods must be at least 1, found 0"))
    }

    @Test("a product ID used in two places is a duplicate across lists")
    func duplicateAcrossLists() {
        let lines = Self.problems("""
        {"products": [{"productID": "x", "type": "NonConsumable", "displayPrice": "1"}],
         "subscriptionGroups": [{"id": "G", "subscriptions": [{"productID": "x", "groupNumber": 1, "displayPrice": "1", "recurringSubscriptionPeriod": "P1Y"}]}]}
        """)
        #expect(lines == ["Broken.storekit: subscriptionGroups[0].subscriptions[0].productID: duplicate product ID \"x\", first declared at products[0]"])
    }

    @Test("warnings do not stop a file: unknown time rate, unknown storefront, numeric price, same level and period")
    func warnings() throws {
        let result = try StoreKitConfiguration.read(Data("""
        {"settings": {"_timeRate": 7, "_storefront": "XYZ"},
         "products": [{"productID": "x", "type": "NonConsumable", "displayPrice": 1.5}],
         "subscriptionGroups": [{"id": "G", "subscriptions": [
            {"productID": "a", "groupNumber": 1, "displayPrice": "1", "recurringSubscriptionPeriod": "P1M"},
            {"productID": "b", "groupNumber": 1, "displayPrice": "1", "recurringSubscriptionPeriod": "P1M"}]}]}
        """.utf8), fileName: "Warn.storekit")
        let paths = result.warnings.map(\.path.description)
        #expect(paths == ["products[0].displayPrice", "subscriptionGroups[0].subscriptions[1].groupNumber", "settings._timeRate", "settings._storefront"])
        #expect(Catalog(configuration: result.configuration).storefront == .unitedStates)
        #expect(Catalog(configuration: result.configuration).product(id: "x")?.price == Decimal(string: "1.5"))
    }

    @Test("unknown keys survive a read and a write")
    func unknownKeysRoundTrip() throws {
        let json = """
        {"futureKey": {"nested": [1, 2.5, "x", null, true]},
         "products": [{"productID": "x", "type": "NonConsumable", "displayPrice": "1", "sparkle": "✨"}],
         "settings": {"_newSwitch": true}}
        """
        let configuration = try StoreKitConfiguration.read(Data(json.utf8), fileName: "Future.storekit").configuration
        #expect(configuration.additionalFields["futureKey"] != nil)
        #expect(configuration.products?.first?.additionalFields["sparkle"] == .string("✨"))
        let original = try JSONDecoder().decode(JSONValue.self, from: Data(json.utf8))
        let written = try JSONDecoder().decode(JSONValue.self, from: configuration.jsonData())
        #expect(written.isEquivalent(to: original))
    }

    @Test("a missing file and a directory are reported by name")
    func missingFile() {
        #expect {
            try StoreKitConfiguration.load(contentsOf: URL(fileURLWithPath: "/nonexistent/Shop.storekit"))
        } throws: { error in
            "\(error)" == "/nonexistent/Shop.storekit: (top level): no such file"
        }
        #expect {
            try StoreKitConfiguration.load(contentsOf: URL(fileURLWithPath: "/tmp"))
        } throws: { error in
            "\(error)".contains("is a directory")
        }
    }
}
