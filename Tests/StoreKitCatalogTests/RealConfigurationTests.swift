import AppStoreModels
import Foundation
import StoreKitCatalog
import Testing
import TestSupport

/// The 24 real `.storekit` files other teams wrote load, round-trip and list exactly their products.
@Suite(.timeLimit(.minutes(10)), .enabled(if: SharedTestData.isAvailable, SharedTestData.skipReason))
struct RealConfigurationTests {
    static let files = SharedTestData.files(in: "storekit-files", withExtension: "storekit")

    static func load(_ name: String) throws -> StoreKitConfiguration {
        try StoreKitConfiguration.load(contentsOf: SharedTestData.url("storekit-files/\(name)")).configuration
    }

    /// The product IDs a file declares, read from the raw JSON without this package's model.
    static func declaredProductIDs(_ file: URL) throws -> [String] {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as! [String: Any]
        var ids: [String] = []
        for key in ["products", "nonRenewingSubscriptions"] {
            ids += (object[key] as? [[String: Any]] ?? []).compactMap { $0["productID"] as? String }
        }
        for group in object["subscriptionGroups"] as? [[String: Any]] ?? [] {
            ids += (group["subscriptions"] as? [[String: Any]] ?? []).compactMap { $0["productID"] as? String }
        }
        return ids
    }

    @Test("every file SOURCES.md lists is here")
    func fileCount() throws {
        let listed = try SharedTestData.text("storekit-files/SOURCES.md").split(separator: "\n").filter { $0.hasPrefix("| `") }
        #expect(Self.files.count == listed.count)
        #expect(Self.files.count == 23)
    }

    @Test("every real file loads without errors", arguments: files)
    func loads(file: URL) {
        #expect(throws: Never.self) { try StoreKitConfiguration.load(contentsOf: file) }
    }

    @Test("every real file written back is unchanged in meaning", arguments: files)
    func roundTrips(file: URL) throws {
        let original = try JSONDecoder().decode(JSONValue.self, from: Data(contentsOf: file))
        let configuration = try StoreKitConfiguration.load(contentsOf: file).configuration
        let rewritten = try JSONDecoder().decode(JSONValue.self, from: configuration.jsonData())
        #expect(rewritten.isEquivalent(to: original))
        let reread = try StoreKitConfiguration.read(configuration.jsonData(), fileName: file.lastPathComponent).configuration
        #expect(reread == configuration)
    }

    @Test("every real file's catalog lists exactly the product IDs it declares", arguments: files)
    func listsDeclaredProducts(file: URL) throws {
        let catalog = Catalog(configuration: try StoreKitConfiguration.load(contentsOf: file).configuration)
        let declared = try Self.declaredProductIDs(file)
        #expect(catalog.products.map(\.id) == declared)
        #expect(!declared.isEmpty)
    }

    @Test("format 1.0: no identifier, no non-renewing list, free trials")
    func formatOne() throws {
        let configuration = try Self.load("RevenueCat__purchases-ios__Configuration@2020-07-01.storekit")
        #expect(configuration.version == .init(major: 1, minor: 0))
        #expect(configuration.identifier == nil)
        #expect(configuration.nonRenewingSubscriptions == nil)
        let catalog = Catalog(configuration: configuration)
        let intro = catalog.products.compactMap { $0.subscription?.introductoryOffer }.first
        #expect(intro?.paymentMode == .freeTrial)
    }

    @Test("introductory offers of all three payment modes and offer codes (Food Truck)")
    func foodTruckOffers() throws {
        let catalog = Catalog(configuration: try Self.load("apple__sample-food-truck__Products.storekit"))
        let monthly = try #require(catalog.product(id: "socialfeedplus.monthly")?.subscription)
        #expect(monthly.introductoryOffer?.paymentMode == .payAsYouGo)
        #expect(monthly.introductoryOffer?.periodCount == 3)
        #expect(monthly.introductoryOffer?.price == Decimal(string: "2.49"))
        #expect(monthly.codeOffers.first?.id == "Free month")
        let modes = Set(catalog.products.compactMap { $0.subscription?.introductoryOffer?.paymentMode })
        #expect(modes.isSuperset(of: [.payAsYouGo, .payUpFront]))
        let arabic = Catalog(configuration: catalog.configuration, locale: "ar")
        #expect(arabic.product(id: "socialfeedplus.monthly")?.displayName != catalog.product(id: "socialfeedplus.monthly")?.displayName)
    }

    @Test("promotional offers carry their offer IDs and the offer signing key is read (StoreHelper)")
    func promotionalOffers() throws {
        let configuration = try Self.load("russell-archer__StoreHelper__SampleProducts@2023-02-12.storekit")
        let promotional = Catalog(configuration: configuration).products.flatMap { $0.subscription?.promotionalOffers ?? [] }
        #expect(!promotional.isEmpty)
        #expect(promotional.allSatisfy { $0.id?.isEmpty == false && $0.kind == .promotional })
        #expect(configuration.subscriptionOffersKeyPair?.privateKey == "REDACTED")
    }

    @Test("offer codes with eligibility and stacking (Adapty)")
    func offerCodes() throws {
        let codes = Catalog(configuration: try Self.load("adaptyteam__AdaptySDK-iOS__SKConfig.storekit")).products
            .flatMap { $0.subscription?.codeOffers ?? [] }
        #expect(!codes.isEmpty)
        #expect(codes.contains { !$0.eligibility.isEmpty })
    }

    @Test("win-back offers with isEligible (RevenueCat KMP and flutter)")
    func winBackOffers() throws {
        for name in ["RevenueCat__purchases-kmp__SKConfig.storekit", "flutter__packages__Configuration.storekit"] {
            let winBack = Catalog(configuration: try Self.load(name)).products.flatMap { $0.subscription?.winBackOffers ?? [] }
            #expect(!winBack.isEmpty, "\(name)")
            #expect(winBack.allSatisfy { $0.kind == .winBack && $0.id != nil })
        }
    }

    @Test("format 5.0: billing plans and introductoryOffers arrays")
    func billingPlans() throws {
        let configuration = try Self.load("RevenueCat__purchases-ios__UnitTestsConfiguration@2026-06-03.storekit")
        #expect(configuration.version?.major == 5)
        let subscription = try #require(Catalog(configuration: configuration).product(id: "com.revenuecat.monthly_4.99.1_week_intro")?.subscription)
        #expect(subscription.billingPlans.first?.type == .billedUpfront)
        #expect(subscription.introductoryOffer?.period == .months(3))
        let raw = configuration.subscriptionGroups?.first?.subscriptions?.first
        #expect(raw?.introductoryOffers?.count == 1)
        #expect(raw?.adHocOffers?.first?.billingPlanType == "BILLED_UPFRONT")
    }

    @Test("settings of every era are read", arguments: [
        ("cntrump__SKDemo__Products.storekit", 15, JSONValue.integer(6)),
        ("apphud__ApphudSDK__StoreKit.storekit", 1000, JSONValue.object(["3": .integer(5)])),
        ("Automattic__pocket-casts-ios__Pocket-Casts-Configuration@2024-10-04.storekit", 1005, JSONValue.object(["3": .integer(6), "5": .integer(1004)])),
    ])
    func timeRates(name: String, rate: Int, compatibility: JSONValue) throws {
        let settings = try #require(try Self.load(name).settings)
        #expect(settings.timeRate == rate)
        #expect(TimeRate(rawValue: rate) != nil)
        #expect(settings.compatibilityTimeRate == compatibility)
    }

    @Test("simulated errors, Ask to Buy, dialogs, storefronts and synced-file keys")
    func otherSettings() throws {
        let tester = try #require(try Self.load("RevenueCat__purchases-ios__RevenueCat_IntegrationPurchaseTesterConfiguration@2023-06-20.storekit").settings)
        #expect(tester.storeKitErrors?.map(\.name) == StoreKitConfiguration.failableAPINames)
        #expect(tester.storeKitErrors?.contains { $0.current != nil } == true)
        #expect(try Self.load("russell-archer__StoreHelper__Products@2021-06-18.storekit").settings?.askToBuyEnabled == true)
        #expect(try Self.load("tikhop__Mercato__Mercato.storekit").settings?.disableDialogs == true)
        let synced = try #require(try Self.load("adaptyteam__AdaptySDK-iOS__SKConfig.storekit").settings)
        #expect(synced.applicationInternalID != nil && synced.developerTeamID != nil && synced.lastSynchronizedDate != nil)
        #expect(try Self.load("RevenueCat__purchases-ios__StoreKitConfiguration.storekit").settings?.storefront == "ESP")
        #expect(try Self.load("RevenueCat__purchases-ios__UnitTestsConfiguration@2022-04-14.storekit").settings?.timeRate == 6)
    }

    @Test("localizations: the locale picks the name, en_GB-only products fall back to it, group display names")
    func localizations() throws {
        let tester = try Self.load("RevenueCat__purchases-ios__RevenueCat_IntegrationPurchaseTesterConfiguration@2023-06-20.storekit")
        let productID = "com.revenuecat.monthly_4.99.1_week_intro"
        #expect(Catalog(configuration: tester).product(id: productID)?.displayName == "Monthly Free Trial")
        #expect(Catalog(configuration: tester, locale: "es_ES").product(id: productID)?.displayName == "Mensual con prueba gratis")
        let british = try Self.load("RevenueCat__purchases-ios__PurchaseTesterStoreKitConfiguration.storekit")
        let greenie = Catalog(configuration: british).products.first { $0.id == "greenie_annual" }
        #expect(greenie?.displayName.isEmpty == false)
        let grouped = try Self.load("RevenueCat__purchases-ios__StoreKitConfiguration.storekit")
        #expect(Catalog(configuration: grouped).subscriptionGroups.contains { $0.displayName != nil })
    }

    @Test("a seven-level group keeps its levels in order (Apphud)")
    func manyLevels() throws {
        let catalog = Catalog(configuration: try Self.load("apphud__ApphudSDK__StoreKit.storekit"))
        let levels = catalog.subscriptionGroups.flatMap { $0.subscriptions.map { $0.subscription!.groupLevel } }
        #expect(levels == levels.sorted())
        #expect(levels.max() == 7)
    }
}
