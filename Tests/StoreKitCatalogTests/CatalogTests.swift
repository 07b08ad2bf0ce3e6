import AppStoreModels
import Foundation
import StoreKitCatalog
import Testing
import TestSupport

@Suite(.timeLimit(.minutes(10)))
struct CatalogTests {
    static let shopURL = ExampleShop.file

    static func shop(locale: String? = nil, storefront: String? = nil) throws -> Catalog {
        let configuration = try StoreKitConfiguration.load(contentsOf: shopURL).configuration
        return Catalog(configuration: configuration, locale: locale, storefront: storefront.flatMap { Storefront(code: $0) })
    }

    static func single(price: String, locale: String, storefront: String) throws -> CatalogProduct {
        let json = #"{"products": [{"productID": "p", "type": "Consumable", "displayPrice": "\#(price)"}]}"#
        let configuration = try StoreKitConfiguration.read(Data(json.utf8), fileName: "p.storekit").configuration
        return try #require(Catalog(configuration: configuration, locale: locale, storefront: Storefront(code: storefront)).products.first)
    }

    @Test("display prices use the storefront's currency and the locale's format", arguments: [
        ("0.99", "en_US", "USA", "$0.99", "USD"),
        ("0.99", "es_ES", "ESP", "0,99\u{00A0}€", "EUR"),
        ("120", "en_US", "JPN", "¥120", "JPY"),
        ("4.99", "en_GB", "GBR", "£4.99", "GBP"),
        ("199.99", "pt_BR", "BRA", "R$\u{00A0}199,99", "BRL"),
    ])
    func displayPrice(price: String, locale: String, storefront: String, expected: String, currency: String) throws {
        let product = try Self.single(price: price, locale: locale, storefront: storefront)
        #expect(product.displayPrice == expected)
        #expect(product.currency == currency)
        #expect(product.price == Decimal(string: price, locale: Locale(identifier: "en_US_POSIX")))
    }

    @Test("prices convert to milliunits exactly", arguments: [("0.99", Int64(990)), ("199.99", 199_990), ("10", 10_000), ("0", 0)])
    func milliunits(price: String, expected: Int64) throws {
        #expect(try Self.single(price: price, locale: "en_US", storefront: "USA").priceInMilliunits == expected)
    }

    @Test("the example shop has every product kind, two groups, every offer kind and two localizations")
    func exampleShop() throws {
        let catalog = try Self.shop()
        #expect(Set(catalog.products.map(\.kind)) == Set(CatalogProduct.Kind.allCases))
        #expect(catalog.subscriptionGroups.count == 2)
        #expect(catalog.subscriptionGroups[0].subscriptions.map { $0.subscription!.groupLevel } == [1, 1, 2, 3])
        let offers = catalog.products.compactMap(\.subscription)
        #expect(Set(offers.compactMap { $0.introductoryOffer?.paymentMode }) == [.freeTrial, .payAsYouGo, .payUpFront])
        #expect(offers.contains { !$0.promotionalOffers.isEmpty })
        #expect(offers.contains { !$0.codeOffers.isEmpty })
        #expect(offers.contains { !$0.winBackOffers.isEmpty })
        #expect(offers.contains { $0.billingPlans.contains { $0.type == .monthly } })
        #expect(catalog.configuration.subscriptionOffersKeyPair?.privateKey != nil)
        let spanish = try Self.shop(locale: "es_ES", storefront: "ESP")
        #expect(spanish.product(id: "com.example.shop.pro")?.displayName == "Desbloqueo Pro")
        #expect(spanish.product(id: "com.example.shop.pro")?.displayPrice == "9,99\u{00A0}€")
        #expect(spanish.subscriptionGroups.first?.displayName == "Tienda Plus")
    }

    @Test("a missing locale falls back to the same language, then the file's locale")
    func localeFallback() throws {
        #expect(try Self.shop(locale: "es_MX").product(id: "com.example.shop.pro")?.displayName == "Desbloqueo Pro")
        #expect(try Self.shop(locale: "fr_FR").product(id: "com.example.shop.pro")?.displayName == "Pro Unlock")
        #expect(try Self.shop(locale: "es-es").locale == "es_ES")
    }

    @Test("products(for:) returns only known identifiers, in catalog order")
    func productsForIdentifiers() throws {
        let catalog = try Self.shop()
        let found = catalog.products(for: ["com.example.shop.news.lite", "nope", "com.example.shop.gems.small"])
        #expect(found.map(\.id) == ["com.example.shop.gems.small", "com.example.shop.news.lite"])
    }

    @Test("offers carry kind, identifier, period and count")
    func offerDetails() throws {
        let premium = try #require(try Self.shop().product(id: "com.example.shop.plus.premium.monthly")?.subscription)
        #expect(premium.introductoryOffer?.id == nil)
        #expect(premium.introductoryOffer?.periodCount == 3)
        #expect(premium.introductoryOffer?.displayPrice == "$4.99")
        #expect(premium.promotionalOffers.first?.id == "premium.monthly.firstmonth")
        #expect(premium.winBackOffers.first?.paymentMode == .freeTrial)
        let yearly = try #require(try Self.shop().product(id: "com.example.shop.plus.premium.yearly")?.subscription)
        #expect(yearly.codeOffers.first?.id == "FRIENDS-MONTH")
        #expect(yearly.codeOffers.first?.eligibility == [.new, .expired])
        #expect(yearly.codeOffers.first?.isStackable == true)
        #expect(yearly.introductoryOffer?.period == .weeks(2))
    }
}

@Suite(.timeLimit(.minutes(10)))
struct SubscriptionPeriodTests {
    @Test("ISO 8601 periods parse and format", arguments: ["P3D", "P1W", "P2W", "P1M", "P2M", "P3M", "P6M", "P1Y", "P14D"])
    func roundTrip(text: String) throws {
        #expect(try #require(SubscriptionPeriod(iso8601: text)).iso8601 == text)
    }

    @Test("malformed periods are rejected", arguments: ["", "P", "1M", "P0M", "P-1M", "PM", "P1X", "P1.5M", "p1m", "P1M2D", "P99999D"])
    func rejects(text: String) {
        #expect(SubscriptionPeriod(iso8601: text) == nil)
    }

    static func date(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }

    @Test("months keep the anchor day and clamp to short months")
    func monthArithmetic() {
        let start = Self.date("2026-01-31T10:00:00Z")
        let monthly = SubscriptionPeriod.months(1)
        #expect(monthly.date(byAdding: 1, to: start) == Self.date("2026-02-28T10:00:00Z"))
        #expect(monthly.date(byAdding: 2, to: start) == Self.date("2026-03-31T10:00:00Z"))
        #expect(monthly.date(byAdding: 13, to: start) == Self.date("2027-02-28T10:00:00Z"))
        #expect(SubscriptionPeriod.years(1).date(byAdding: 1, to: Self.date("2028-02-29T00:00:00Z")) == Self.date("2029-02-28T00:00:00Z"))
        #expect(SubscriptionPeriod.weeks(1).date(byAdding: 2, to: start) == Self.date("2026-02-14T10:00:00Z"))
        #expect(SubscriptionPeriod.days(3).date(byAdding: 1, to: start) == Self.date("2026-02-03T10:00:00Z"))
    }

    @Test("a year of a monthly plan holds twelve periods", arguments: [0, 1, 11, 12])
    func completePeriods(extraSeconds: Int) {
        let start = Self.date("2026-01-31T10:00:00Z")
        let end = Self.date("2027-01-31T10:00:00Z").addingTimeInterval(Double(extraSeconds) - 1)
        #expect(SubscriptionPeriod.months(1).completePeriods(from: start, to: end) == (extraSeconds >= 1 ? 12 : 11))
        #expect(SubscriptionPeriod.months(1).completePeriods(from: end, to: start) == 0)
    }
}

@Suite(.timeLimit(.minutes(10)))
struct StorefrontTests {
    @Test("well-known storefronts have Apple's identifiers and currencies", arguments: [
        ("USA", "143441", "USD"), ("AUS", "143460", "AUD"), ("GBR", "143444", "GBP"), ("JPN", "143462", "JPY"),
        ("ESP", "143454", "EUR"), ("PRT", "143453", "EUR"), ("DEU", "143443", "EUR"), ("CAN", "143455", "CAD"),
    ])
    func known(code: String, id: String, currency: String) throws {
        let storefront = try #require(Storefront(code: code))
        #expect(storefront.id == id)
        #expect(storefront.currency == currency)
        #expect(Storefront(id: id) == storefront)
        #expect(Storefront(code: storefront.regionCode) == storefront)
        #expect(Storefront(code: code.lowercased()) == storefront)
    }

    @Test("the table has unique codes and identifiers, all three-letter and numeric")
    func tableIsConsistent() {
        #expect(Storefront.all.count >= 130)
        #expect(Set(Storefront.all.map(\.countryCode)).count == Storefront.all.count)
        #expect(Set(Storefront.all.map(\.id)).count == Storefront.all.count)
        #expect(Storefront.all.allSatisfy { $0.countryCode.count == 3 && $0.regionCode.count == 2 && Int($0.id) != nil && $0.currency.count == 3 })
        #expect(Storefront(code: "XYZ") == nil)
    }
}

@Suite(.timeLimit(.minutes(10)))
struct NonRenewingTermTests {
    @Test("each purchase adds a period, from when it was bought or when the earlier ones run out")
    func stacking() {
        let season = SubscriptionPeriod.months(3)
        let january = SubscriptionPeriodTests.date("2026-01-15T00:00:00Z")
        let february = SubscriptionPeriodTests.date("2026-02-01T00:00:00Z")
        let september = SubscriptionPeriodTests.date("2026-09-01T00:00:00Z")
        #expect(NonRenewingTerm.expirationDate(purchaseDates: [], period: season) == nil)
        #expect(NonRenewingTerm.expirationDate(purchaseDates: [january], period: season) == SubscriptionPeriodTests.date("2026-04-15T00:00:00Z"))
        #expect(NonRenewingTerm.expirationDate(purchaseDates: [february, january], period: season) == SubscriptionPeriodTests.date("2026-07-15T00:00:00Z"))
        #expect(NonRenewingTerm.expirationDate(purchaseDates: [january, september], period: season) == SubscriptionPeriodTests.date("2026-12-01T00:00:00Z"))
        #expect(NonRenewingTerm.isActive(purchaseDates: [january], period: season, at: february))
        #expect(!NonRenewingTerm.isActive(purchaseDates: [january], period: season, at: september))
    }
}
