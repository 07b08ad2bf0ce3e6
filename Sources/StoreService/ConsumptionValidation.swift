import AppStoreModels
import Foundation

/// Field-by-field checks of the consumption information a developer sends after a
/// `CONSUMPTION_REQUEST` notification, V1 (`/inApps/v1/transactions/consumption/…`) and V2 bodies,
/// with Apple's error code for the first field that is wrong.
enum ConsumptionValidation {
    static func validate(_ body: Data, version: String) throws(ServerAPIError) {
        guard case .object(let object)? = try? JSONDecoder().decode(JSONValue.self, from: body) else {
            throw ServerAPIError.generalBadRequest.with("The body is not a JSON object.")
        }
        if version == "v1" { try validateV1(object) } else { try validateV2(object) }
    }

    /// An integer field in a range; absent is accepted unless `required`.
    private static func integer(_ object: [String: JSONValue], _ key: String, _ range: ClosedRange<Int64>, required: Bool = false,
                                _ error: ServerAPIError) throws(ServerAPIError) {
        switch object[key] {
        case nil: if required { throw error }
        case .integer(let value)?: guard range.contains(value) else { throw error }
        default: throw error
        }
    }

    /// A boolean field; `mustBeTrue` for consent.
    private static func boolean(_ object: [String: JSONValue], _ key: String, mustBeTrue: Bool = false, _ error: ServerAPIError) throws(ServerAPIError) {
        guard case .bool(let value)? = object[key], value || !mustBeTrue else { throw error }
    }

    private static func string(_ object: [String: JSONValue], _ key: String, in allowed: Set<String>, required: Bool,
                               _ error: ServerAPIError) throws(ServerAPIError) {
        switch object[key] {
        case nil: if required { throw error }
        case .string(let value)?: guard allowed.contains(value) else { throw error }
        default: throw error
        }
    }

    private static func validateV1(_ object: [String: JSONValue]) throws(ServerAPIError) {
        try boolean(object, "customerConsented", mustBeTrue: true, .invalidCustomerConsented)
        try integer(object, "consumptionStatus", 0...3, required: true, .invalidConsumptionStatus)
        try integer(object, "platform", 0...2, required: true, .invalidPlatform)
        try boolean(object, "sampleContentProvided", .invalidSampleContentProvided)
        try integer(object, "deliveryStatus", 0...5, required: true, .invalidDeliveryStatus)
        switch object["appAccountToken"] {
        case nil: break
        case .string(let text)?: guard text.isEmpty || UUID(uuidString: text) != nil else { throw ServerAPIError.invalidAppAccountToken }
        default: throw ServerAPIError.invalidAppAccountToken
        }
        try integer(object, "accountTenure", 0...7, required: true, .invalidAccountTenure)
        try integer(object, "playTime", 0...7, required: true, .invalidPlayTime)
        try integer(object, "lifetimeDollarsRefunded", 0...7, required: true, .invalidLifetimeDollarsRefunded)
        try integer(object, "lifetimeDollarsPurchased", 0...7, required: true, .invalidLifetimeDollarsPurchased)
        try integer(object, "userStatus", 0...4, required: true, .invalidUserStatus)
        try integer(object, "refundPreference", 0...3, .generalBadRequest.with("refundPreference is 0 to 3."))
    }

    private static func validateV2(_ object: [String: JSONValue]) throws(ServerAPIError) {
        try boolean(object, "customerConsented", mustBeTrue: true, .invalidCustomerConsented)
        try boolean(object, "sampleContentProvided", .invalidSampleContentProvided)
        try string(object, "deliveryStatus", in: ["DELIVERED", "UNDELIVERED_QUALITY_ISSUE", "UNDELIVERED_WRONG_ITEM", "UNDELIVERED_SERVER_OUTAGE",
                                                   "UNDELIVERED_OTHER"], required: true, .invalidDeliveryStatus)
        try integer(object, "consumptionPercentage", 0...100_000, .generalBadRequest.with("consumptionPercentage is 0 to 100000 milliunits."))
        try string(object, "refundPreference", in: ["DECLINE", "GRANT_FULL", "GRANT_PRORATED"], required: false,
                   .generalBadRequest.with("refundPreference is DECLINE, GRANT_FULL or GRANT_PRORATED."))
    }
}
