import Foundation
import Testing
import TestSupport

@Suite(.timeLimit(.minutes(10)))
struct CatalogCommandTests {
    static let shop = ExampleShop.file.path

    @Test("the table lists every product with its type, name, price and group")
    func table() async {
        let run = await CommandRun.run(["catalog", Self.shop])
        #expect(run.status == 0)
        let lines = run.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("PRODUCT") == true)
        #expect(lines.contains { $0.hasPrefix("com.example.shop.plus.standard.monthly") && $0.contains("$4.99") && $0.hasSuffix("21000001/2/P1M") })
        #expect(lines.last == "12 products, storefront USA (USD), locale en_US")
    }

    @Test("--json gives the documented fields, localized for --locale and --storefront")
    func json() async throws {
        let run = await CommandRun.run(["catalog", Self.shop, "--json", "--locale", "es_ES", "--storefront", "ESP"])
        #expect(run.status == 0)
        let products = try #require(try JSONSerialization.jsonObject(with: run.standardOutputData) as? [[String: Any]])
        #expect(products.count == 12)
        let pro = try #require(products.first { $0["id"] as? String == "com.example.shop.pro" })
        #expect(pro["type"] as? String == "nonConsumable")
        #expect(pro["displayName"] as? String == "Desbloqueo Pro")
        #expect(pro["price"] as? String == "9.99")
        #expect(pro["displayPrice"] as? String == "9,99\u{00A0}€")
        let weekly = try #require(products.first { $0["id"] as? String == "com.example.shop.plus.basic.weekly" })
        #expect(weekly["subscriptionGroupID"] as? String == "21000001")
        #expect(weekly["groupLevel"] as? Int == 3)
        #expect(weekly["subscriptionPeriod"] as? String == "P1W")
        #expect((weekly["introductoryOffer"] as? [String: Any])?["paymentMode"] as? String == "freeTrial")
    }

    @Test("a broken file exits 1 and lists every problem on standard error")
    func brokenFile() async throws {
        let scratch = Scratch()
        let file = try scratch.write("""
        {"products": [{"productID": "a", "type": "Gadget", "displayPrice": "x"}, {"productID": "a", "type": "Consumable", "displayPrice": "1"}]}
        """, to: "Broken.storekit")
        let run = await CommandRun.run(["catalog", file])
        #expect(run.status == 1)
        let lines = run.standardError.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.allSatisfy { $0.hasPrefix("error: Broken.storekit: products[") })
        #expect(lines.contains("error: Broken.storekit: products[1].productID: duplicate product ID \"a\", first declared at products[0]"))
        #expect(run.standardOutput.isEmpty)
    }

    @Test("an unknown storefront is a usage error")
    func unknownStorefront() async {
        let run = await CommandRun.run(["catalog", Self.shop, "--storefront", "XYZ"])
        #expect(run.status == 64)
        #expect(run.standardError.contains("--storefront must be a storefront code"))
    }

    @Test("bench catalog reports microseconds per product against the limit")
    func benchCatalog() async throws {
        let run = await CommandRun.run(["bench", "catalog", Self.shop, "--json", "--seconds", "0.05"])
        #expect(run.status == 0, "\(run.standardError)")
        let report = try #require(run.jsonObject)
        #expect(report["products"] as? Int == 12)
        #expect((report["microseconds_per_product"] as? Double ?? 0) > 0)
        #expect(report["limit_microseconds_per_product"] as? Double == 1000)
    }
}
