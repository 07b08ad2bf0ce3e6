import AppStoreModels
import Foundation

/// Turns configuration entries into catalog products for one locale and storefront.
struct CatalogBuilder {
    let locale: String
    let fileLocale: String?
    let storefront: Storefront
    private let currencyStyle: Decimal.FormatStyle.Currency

    init(locale: String, fileLocale: String?, storefront: Storefront) {
        self.locale = locale
        self.fileLocale = fileLocale
        self.storefront = storefront
        self.currencyStyle = Decimal.FormatStyle.Currency(code: storefront.currency, locale: Locale(identifier: locale))
    }

    /// The localization for the catalog's locale: the exact locale, else the same language, else the
    /// file's default locale, else `en_US`, else the first one.
    func localization(in localizations: [StoreKitConfiguration.Localization]?) -> StoreKitConfiguration.Localization? {
        guard let localizations, !localizations.isEmpty else { return nil }
        let normalized = localizations.map { ($0, $0.locale.map(Catalog.normalize)) }
        let language = locale.split(separator: "_").first.map(String.init)
        func find(_ predicate: (String) -> Bool) -> StoreKitConfiguration.Localization? {
            normalized.first { $0.1.map(predicate) ?? false }?.0
        }
        return find { $0 == locale }
            ?? find { $0.split(separator: "_").first.map(String.init) == language }
            ?? fileLocale.flatMap { file in find { $0 == file } }
            ?? find { $0 == "en_US" }
            ?? localizations.first
    }

    func price(_ text: String?) -> Decimal {
        guard let text, StoreKitConfiguration.isPrice(text) else { return 0 }
        return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) ?? 0
    }

    func format(_ price: Decimal) -> String {
        price.formatted(currencyStyle)
    }

    func oneTimeProduct(_ product: StoreKitConfiguration.Product, nonRenewing: Bool) -> CatalogProduct? {
        guard let id = product.productID, !id.isEmpty else { return nil }
        let kind: CatalogProduct.Kind
        if nonRenewing {
            kind = .nonRenewable
        } else if product.type == "Consumable" {
            kind = .consumable
        } else {
            kind = .nonConsumable
        }
        let localization = localization(in: product.localizations)
        let amount = price(product.displayPrice)
        var catalogProduct = CatalogProduct(
            id: id, kind: kind, displayName: localization?.displayName ?? product.referenceName ?? id,
            description: localization?.description ?? "", price: amount, displayPrice: format(amount),
            currency: storefront.currency, priceLocale: "\(locale)@currency=\(storefront.currency)", isFamilyShareable: product.familyShareable ?? false,
            referenceName: product.referenceName, subscription: nil)
        catalogProduct.internalID = product.internalID
        return catalogProduct
    }

    func subscription(_ subscription: StoreKitConfiguration.Subscription, groupID: String, groupDisplayName: String?) -> CatalogProduct? {
        guard let id = subscription.productID, !id.isEmpty,
              let period = subscription.recurringSubscriptionPeriod.flatMap(SubscriptionPeriod.init(iso8601:))
        else { return nil }
        let localization = localization(in: subscription.localizations)
        let amount = price(subscription.displayPrice)
        let intro = subscription.introductoryOffer.flatMap { offer($0, kind: .introductory) }
            ?? subscription.introductoryOffers?.first.flatMap { offer($0, kind: .introductory) }
        let info = CatalogProduct.SubscriptionInfo(
            groupID: groupID, groupDisplayName: groupDisplayName, groupLevel: max(1, subscription.groupNumber ?? 1), period: period,
            introductoryOffer: intro,
            promotionalOffers: (subscription.adHocOffers ?? []).compactMap { offer($0, kind: .promotional) },
            winBackOffers: (subscription.winbackOffers ?? []).compactMap { offer($0, kind: .winBack) },
            codeOffers: (subscription.codeOffers ?? []).compactMap { offer($0, kind: .code) },
            billingPlans: (subscription.billingPlans ?? []).compactMap(billingPlan))
        var catalogProduct = CatalogProduct(
            id: id, kind: .autoRenewable, displayName: localization?.displayName ?? subscription.referenceName ?? id,
            description: localization?.description ?? "", price: amount, displayPrice: format(amount),
            currency: storefront.currency, priceLocale: "\(locale)@currency=\(storefront.currency)", isFamilyShareable: subscription.familyShareable ?? false,
            referenceName: subscription.referenceName, subscription: info)
        catalogProduct.internalID = subscription.internalID
        return catalogProduct
    }

    func offer(_ offer: StoreKitConfiguration.Offer, kind: CatalogOffer.Kind) -> CatalogOffer? {
        guard let mode = CatalogOffer.PaymentMode(configurationValue: offer.paymentMode),
              let period = offer.subscriptionPeriod.flatMap(SubscriptionPeriod.init(iso8601:))
        else { return nil }
        let amount = mode == .freeTrial ? 0 : price(offer.displayPrice)
        let id: String? = kind == .code ? offer.referenceName : offer.offerID
        return CatalogOffer(
            kind: kind, id: kind == .introductory ? nil : id, referenceName: offer.referenceName, paymentMode: mode,
            period: period, periodCount: max(1, offer.numberOfPeriods ?? 1), price: amount, displayPrice: format(amount),
            eligibility: Set((offer.eligibility ?? []).compactMap(CatalogOffer.Eligibility.init(rawValue:))),
            isStackable: offer.isStackable ?? false, isEligible: kind == .winBack ? (offer.isEligible ?? true) : true)
    }

    func billingPlan(_ plan: StoreKitConfiguration.BillingPlan) -> CatalogProduct.BillingPlan? {
        guard let type = plan.billingPlanType else { return nil }
        let amount = price(plan.displayPrice)
        return CatalogProduct.BillingPlan(
            type: BillingPlanType(rawValue: type), price: amount, displayPrice: format(amount),
            commitmentPrice: plan.commitmentDisplayPrice.map(price), isEnabled: plan.isEnabled ?? true)
    }
}
