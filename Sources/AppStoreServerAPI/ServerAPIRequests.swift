import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The filters of a transaction history call, sent as Apple's query parameters.
public struct TransactionHistoryRequest: Hashable, Sendable {
    public enum ProductType: String, Sendable { case autoRenewable = "AUTO_RENEWABLE", nonRenewable = "NON_RENEWABLE", consumable = "CONSUMABLE", nonConsumable = "NON_CONSUMABLE" }
    public enum Order: String, Sendable { case ascending = "ASCENDING", descending = "DESCENDING" }
    public enum Ownership: String, Sendable { case purchased = "PURCHASED", familyShared = "FAMILY_SHARED" }

    /// Milliseconds since 1970.
    public var startDate: Int64?
    public var endDate: Int64?
    public var productIds: [String]
    public var productTypes: [ProductType]
    public var sort: Order?
    public var subscriptionGroupIdentifiers: [String]
    public var inAppOwnershipType: Ownership?
    public var revoked: Bool?

    public init(startDate: Int64? = nil, endDate: Int64? = nil, productIds: [String] = [], productTypes: [ProductType] = [], sort: Order? = nil,
                subscriptionGroupIdentifiers: [String] = [], inAppOwnershipType: Ownership? = nil, revoked: Bool? = nil) {
        self.startDate = startDate
        self.endDate = endDate
        self.productIds = productIds
        self.productTypes = productTypes
        self.sort = sort
        self.subscriptionGroupIdentifiers = subscriptionGroupIdentifiers
        self.inAppOwnershipType = inAppOwnershipType
        self.revoked = revoked
    }

    var queryItems: [URLQueryItem] {
        var items: [URLQueryItem] = []
        if let startDate { items.append(URLQueryItem(name: "startDate", value: String(startDate))) }
        if let endDate { items.append(URLQueryItem(name: "endDate", value: String(endDate))) }
        items += productIds.map { URLQueryItem(name: "productId", value: $0) }
        items += productTypes.map { URLQueryItem(name: "productType", value: $0.rawValue) }
        if let sort { items.append(URLQueryItem(name: "sort", value: sort.rawValue)) }
        items += subscriptionGroupIdentifiers.map { URLQueryItem(name: "subscriptionGroupIdentifier", value: $0) }
        if let inAppOwnershipType { items.append(URLQueryItem(name: "inAppOwnershipType", value: inAppOwnershipType.rawValue)) }
        if let revoked { items.append(URLQueryItem(name: "revoked", value: revoked ? "true" : "false")) }
        return items
    }
}

/// The V2 consumption information a developer sends after a `CONSUMPTION_REQUEST`.
public struct ConsumptionRequest: Codable, Hashable, Sendable {
    public var customerConsented: Bool
    public var sampleContentProvided: Bool
    /// `DELIVERED`, `UNDELIVERED_QUALITY_ISSUE`, `UNDELIVERED_WRONG_ITEM`, `UNDELIVERED_SERVER_OUTAGE`, `UNDELIVERED_OTHER`.
    public var deliveryStatus: String
    /// Milliunits: 0 to 100,000.
    public var consumptionPercentage: Int32?
    /// `DECLINE`, `GRANT_FULL`, `GRANT_PRORATED`.
    public var refundPreference: String?

    public init(customerConsented: Bool, sampleContentProvided: Bool, deliveryStatus: String, consumptionPercentage: Int32? = nil,
                refundPreference: String? = nil) {
        self.customerConsented = customerConsented
        self.sampleContentProvided = sampleContentProvided
        self.deliveryStatus = deliveryStatus
        self.consumptionPercentage = consumptionPercentage
        self.refundPreference = refundPreference
    }
}

/// The V1 consumption data (the older call), each field a small integer code as Apple defines it.
public struct ConsumptionRequestV1: Codable, Hashable, Sendable {
    public var customerConsented: Bool
    public var consumptionStatus: Int32
    public var platform: Int32
    public var sampleContentProvided: Bool
    public var deliveryStatus: Int32
    public var appAccountToken: String
    public var accountTenure: Int32
    public var playTime: Int32
    public var lifetimeDollarsRefunded: Int32
    public var lifetimeDollarsPurchased: Int32
    public var userStatus: Int32
    public var refundPreference: Int32?

    public init(customerConsented: Bool, consumptionStatus: Int32, platform: Int32, sampleContentProvided: Bool, deliveryStatus: Int32,
                appAccountToken: String = "", accountTenure: Int32, playTime: Int32, lifetimeDollarsRefunded: Int32, lifetimeDollarsPurchased: Int32,
                userStatus: Int32, refundPreference: Int32? = nil) {
        self.customerConsented = customerConsented
        self.consumptionStatus = consumptionStatus
        self.platform = platform
        self.sampleContentProvided = sampleContentProvided
        self.deliveryStatus = deliveryStatus
        self.appAccountToken = appAccountToken
        self.accountTenure = accountTenure
        self.playTime = playTime
        self.lifetimeDollarsRefunded = lifetimeDollarsRefunded
        self.lifetimeDollarsPurchased = lifetimeDollarsPurchased
        self.userStatus = userStatus
        self.refundPreference = refundPreference
    }
}
