import AppStoreModels
import Foundation
import HTTPService

/// A failure of the App Store Server API, with Apple's error code and HTTP status, answered as
/// `{"errorCode", "errorMessage"}` with `Content-Type: application/json`.
struct ServerAPIError: HTTPResponseError, CustomStringConvertible {
    var status: Int
    var code: Int64
    var message: String

    init(_ status: Int, _ code: Int64, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    var response: HTTPResponse {
        // Apple answers an unauthenticated request with 401 and no body.
        if self.status == 401 { return HTTPResponse(status: 401) }
        let body = (try? JSONEncoder().encode(ServerAPIErrorBody(errorCode: code, errorMessage: message))) ?? Data()
        return .json(status, body)
    }

    static let unauthorized = ServerAPIError(401, 0, "")
    static let generalBadRequest = ServerAPIError(400, 4_000_000, "Bad request.")
    static let invalidRequestRevision = ServerAPIError(400, 4_000_005, "Invalid request revision.")
    static let invalidTransactionId = ServerAPIError(400, 4_000_006, "Invalid transaction id.")
    static let invalidOriginalTransactionId = ServerAPIError(400, 4_000_008, "Invalid original transaction id.")
    static let invalidExtendByDays = ServerAPIError(400, 4_000_009, "Invalid extend by days value.")
    static let invalidExtendReasonCode = ServerAPIError(400, 4_000_010, "Invalid extend reason code.")
    static let invalidRequestIdentifier = ServerAPIError(400, 4_000_011, "Invalid request identifier.")
    static let startDateTooFarInPast = ServerAPIError(400, 4_000_012, "Start date too far in the past.")
    static let startDateAfterEndDate = ServerAPIError(400, 4_000_013, "Start date after end date.")
    static let invalidPaginationToken = ServerAPIError(400, 4_000_014, "Invalid pagination token.")
    static let invalidStartDate = ServerAPIError(400, 4_000_015, "Invalid start date.")
    static let invalidEndDate = ServerAPIError(400, 4_000_016, "Invalid end date.")
    static let invalidNotificationType = ServerAPIError(400, 4_000_018, "Invalid notification type.")
    static let multipleFiltersSupplied = ServerAPIError(400, 4_000_019, "Multiple filters supplied.")
    static let invalidTestNotificationToken = ServerAPIError(400, 4_000_020, "Invalid test notification token.")
    static let invalidSort = ServerAPIError(400, 4_000_021, "Invalid sort.")
    static let invalidProductType = ServerAPIError(400, 4_000_022, "Invalid product type.")
    static let invalidProductId = ServerAPIError(400, 4_000_023, "Invalid product id.")
    static let invalidSubscriptionGroupIdentifier = ServerAPIError(400, 4_000_024, "Invalid subscription group identifier.")
    static let invalidInAppOwnershipType = ServerAPIError(400, 4_000_026, "Invalid in-app ownership type.")
    static let invalidEmptyStorefrontCountryCodeList = ServerAPIError(400, 4_000_027, "Invalid empty storefront country code list.")
    static let invalidStorefrontCountryCode = ServerAPIError(400, 4_000_028, "Invalid storefront country code.")
    static let invalidRevoked = ServerAPIError(400, 4_000_030, "Invalid revoked value.")
    static let invalidStatus = ServerAPIError(400, 4_000_031, "Invalid status.")
    static let invalidAccountTenure = ServerAPIError(400, 4_000_032, "Invalid account tenure.")
    static let invalidAppAccountToken = ServerAPIError(400, 4_000_033, "Invalid app account token.")
    static let invalidConsumptionStatus = ServerAPIError(400, 4_000_034, "Invalid consumption status.")
    static let invalidCustomerConsented = ServerAPIError(400, 4_000_035, "Invalid customer consented.")
    static let invalidDeliveryStatus = ServerAPIError(400, 4_000_036, "Invalid delivery status.")
    static let invalidLifetimeDollarsPurchased = ServerAPIError(400, 4_000_037, "Invalid lifetime dollars purchased.")
    static let invalidLifetimeDollarsRefunded = ServerAPIError(400, 4_000_038, "Invalid lifetime dollars refunded.")
    static let invalidPlatform = ServerAPIError(400, 4_000_039, "Invalid platform.")
    static let invalidPlayTime = ServerAPIError(400, 4_000_040, "Invalid play time.")
    static let invalidSampleContentProvided = ServerAPIError(400, 4_000_041, "Invalid sample content provided.")
    static let invalidUserStatus = ServerAPIError(400, 4_000_042, "Invalid user status.")
    static let invalidAppAccountTokenUUID = ServerAPIError(400, 4_000_183, "Invalid app account token UUID.")
    static let familyTransactionNotSupported = ServerAPIError(400, 4_000_185, "Family transactions are not supported.")
    static let transactionIdNotOriginalTransactionId = ServerAPIError(400, 4_000_187, "The transaction id is not an original transaction id.")
    static let subscriptionExtensionIneligible = ServerAPIError(403, 4_030_004, "The subscription is not eligible for a renewal date extension.")
    static let subscriptionMaxExtension = ServerAPIError(403, 4_030_005, "The subscription has reached the maximum number of renewal date extensions.")
    static let familySharedSubscriptionExtensionIneligible = ServerAPIError(403, 4_030_007, "A family-shared subscription cannot be extended.")
    static let originalTransactionIdNotFound = ServerAPIError(404, 4_040_005, "Original transaction id not found.")
    static let serverNotificationURLNotFound = ServerAPIError(404, 4_040_007, "No server notification URL is set.")
    static let testNotificationNotFound = ServerAPIError(404, 4_040_008, "Test notification not found.")
    static let statusRequestNotFound = ServerAPIError(404, 4_040_009, "Status request not found.")
    static let transactionIdNotFound = ServerAPIError(404, 4_040_010, "Transaction id not found.")
    static let generalInternal = ServerAPIError(500, 5_000_000, "An unknown error occurred.")
    static let generalInternalRetryable = ServerAPIError(500, 5_000_001, "An unknown error occurred. Please try again.")

    func with(_ detail: String) -> ServerAPIError { ServerAPIError(status, code, "\(message) \(detail)") }

    var description: String { "\(code) \(message)" }
}
