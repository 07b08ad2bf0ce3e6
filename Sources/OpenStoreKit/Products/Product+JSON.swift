import Foundation
import StoreKitCatalog

extension Product {
    /// The product as the App Store describes it, in the shape of its catalog's JSON: `id` (the
    /// product's App Store Connect identifier, the `.storekit` file's `internalID`), `type`
    /// (`in-apps`) and `attributes` (`name`, `description.standard`, `kind`, `offerName` (the product
    /// identifier), `isFamilyShareable`, `offers` with the price, its currency and display form, and
    /// for a subscription its period, group and level, and its introductory offer as a discount).
    public var jsonRepresentation: Data {
        var offer: [String: Any] = [
            "currencyCode": currencyCode,
            "price": "\(price)",
            "priceFormatted": displayPrice,
        ]
        var attributes: [String: Any] = [
            "description": ["standard": description],
            "isFamilyShareable": isFamilyShareable ? 1 : 0,
            "kind": Self.catalogKind(type),
            "name": displayName,
            "offerName": id,
        ]
        if let subscription, let info = catalogProduct.subscription {
            offer["recurringSubscriptionPeriod"] = info.period.iso8601
            if let intro = info.introductoryOffer {
                offer["discounts"] = [[
                    "modeType": Self.discountMode(intro.paymentMode),
                    "numOfPeriods": intro.periodCount,
                    "price": "\(intro.price)",
                    "priceFormatted": intro.displayPrice,
                    "recurringSubscriptionPeriod": intro.period.iso8601,
                ] as [String: Any]]
            }
            attributes["subscriptionFamilyId"] = subscription.subscriptionGroupID
            attributes["subscriptionFamilyName"] = subscription.groupDisplayName
            attributes["subscriptionFamilyRank"] = subscription.groupLevel
        }
        attributes["offers"] = [offer]
        let object: [String: Any] = ["attributes": attributes, "id": catalogProduct.internalID ?? id, "type": "in-apps"]
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
    }

    private static func catalogKind(_ type: ProductType) -> String {
        switch type {
        case .consumable: return "Consumable"
        case .nonConsumable: return "Non-Consumable"
        case .nonRenewable: return "Non-Renewing Subscription"
        case .autoRenewable: return "Auto-Renewable Subscription"
        default: return type.rawValue
        }
    }

    private static func discountMode(_ mode: CatalogOffer.PaymentMode) -> String {
        switch mode {
        case .freeTrial: return "FreeTrial"
        case .payAsYouGo: return "PayAsYouGo"
        case .payUpFront: return "PayUpFront"
        }
    }
}
