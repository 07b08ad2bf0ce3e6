import Foundation
import StoreKitCatalog

/// `storekit catalog`: lists the products of a `.storekit` file as StoreKit presents them.
struct CatalogCommand: Command {
    static let declaration = CommandDeclaration("catalog", group: .store, abstract: "List the products of a .storekit file, localized and priced for a storefront.", arguments: [
        .positional("FILE", "the .storekit file"),
        .option("--locale", "L", "the locale to present in (default: the file's)"),
        .option("--storefront", "CODE", "the storefront to price for (default: the file's)"),
        .flag("--json", "print JSON"),
    ])

    var file: String
    var locale: String?
    var storefront: Storefront?
    var json: Bool

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        locale = try arguments.value("--locale")
        storefront = try arguments.value("--storefront", expected: "a storefront code such as USA, ESP or JPN") { Storefront(code: $0) }
        json = arguments.flag("--json")
        file = try arguments.positional("FILE")
    }

    func run(console: Console) async throws {
        let result = try StoreKitConfiguration.load(contentsOf: URL(fileURLWithPath: file))
        for warning in result.warnings {
            console.printError("warning: \(URL(fileURLWithPath: file).lastPathComponent): \(warning)")
        }
        let catalog = Catalog(configuration: result.configuration, locale: locale, storefront: storefront)
        if json {
            console.print(try PrettyJSON.string(from: catalog.products.map(Self.jsonObject)))
        } else {
            console.print(Self.table(catalog))
        }
    }

    static func jsonObject(_ product: CatalogProduct) -> [String: Any] {
        var object: [String: Any] = [
            "id": product.id, "type": product.kind.rawValue, "displayName": product.displayName,
            "description": product.description, "price": "\(product.price)", "displayPrice": product.displayPrice,
            "currency": product.currency, "isFamilyShareable": product.isFamilyShareable,
        ]
        if let subscription = product.subscription {
            object["subscriptionGroupID"] = subscription.groupID
            object["groupLevel"] = subscription.groupLevel
            object["subscriptionPeriod"] = subscription.period.iso8601
            if let name = subscription.groupDisplayName { object["groupDisplayName"] = name }
            if let intro = subscription.introductoryOffer { object["introductoryOffer"] = offerObject(intro) }
            object["promotionalOffers"] = subscription.promotionalOffers.map(offerObject)
            object["winBackOffers"] = subscription.winBackOffers.map(offerObject)
            object["codeOffers"] = subscription.codeOffers.map(offerObject)
        }
        return object
    }

    static func offerObject(_ offer: CatalogOffer) -> [String: Any] {
        var object: [String: Any] = [
            "type": offer.kind.rawValue, "paymentMode": offer.paymentMode.rawValue, "period": offer.period.iso8601,
            "periodCount": offer.periodCount, "price": "\(offer.price)", "displayPrice": offer.displayPrice,
        ]
        if let id = offer.id { object["id"] = id }
        return object
    }

    static func table(_ catalog: Catalog) -> String {
        let header = ["PRODUCT", "TYPE", "NAME", "PRICE", "GROUP/LEVEL/PERIOD"]
        let rows = catalog.products.map { product -> [String] in
            let subscription = product.subscription.map { "\($0.groupID)/\($0.groupLevel)/\($0.period.iso8601)" } ?? ""
            return [product.id, product.kind.rawValue, product.displayName, product.displayPrice, subscription]
        }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            zip(cells, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
                .trimmingCharacters(in: .whitespaces)
        }
        let summary = "\(catalog.products.count) products, storefront \(catalog.storefront.countryCode) (\(catalog.storefront.currency)), locale \(catalog.locale)"
        return ([line(header)] + rows.map(line) + ["", summary]).joined(separator: "\n")
    }
}
