import Foundation

// The bodies of the App Store Server API, with Apple's JSON field names. Dates are milliseconds since
// 1970 as Apple sends them (`Int64`), so these types encode the same with any date strategy.

/// `GET /inApps/v1/transactions/{transactionId}`.
public struct TransactionInfoResponse: Codable, Hashable, Sendable {
    public var signedTransactionInfo: String?
    public init(signedTransactionInfo: String?) { self.signedTransactionInfo = signedTransactionInfo }
}

/// `GET /inApps/v1|v2/history/{transactionId}`.
public struct HistoryResponse: Codable, Hashable, Sendable {
    public var revision: String?
    public var hasMore: Bool?
    public var bundleId: String?
    public var appAppleId: Int64?
    public var environment: String?
    public var signedTransactions: [String]?
    public init(revision: String?, hasMore: Bool?, bundleId: String?, appAppleId: Int64?, environment: String?, signedTransactions: [String]?) {
        self.revision = revision
        self.hasMore = hasMore
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environment = environment
        self.signedTransactions = signedTransactions
    }
}

/// `GET /inApps/v2/refund/lookup/{transactionId}`.
public struct RefundHistoryResponse: Codable, Hashable, Sendable {
    public var signedTransactions: [String]?
    public var revision: String?
    public var hasMore: Bool?
    public init(signedTransactions: [String]?, revision: String?, hasMore: Bool?) {
        self.signedTransactions = signedTransactions
        self.revision = revision
        self.hasMore = hasMore
    }
}

/// `GET /inApps/v1/subscriptions/{transactionId}`.
public struct StatusResponse: Codable, Hashable, Sendable {
    public var environment: String?
    public var bundleId: String?
    public var appAppleId: Int64?
    public var data: [SubscriptionGroupIdentifierItem]?
    public init(environment: String?, bundleId: String?, appAppleId: Int64?, data: [SubscriptionGroupIdentifierItem]?) {
        self.environment = environment
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.data = data
    }
}

public struct SubscriptionGroupIdentifierItem: Codable, Hashable, Sendable {
    public var subscriptionGroupIdentifier: String?
    public var lastTransactions: [LastTransactionsItem]?
    public init(subscriptionGroupIdentifier: String?, lastTransactions: [LastTransactionsItem]?) {
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.lastTransactions = lastTransactions
    }
}

public struct LastTransactionsItem: Codable, Hashable, Sendable {
    /// 1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked.
    public var status: Int32?
    public var originalTransactionId: String?
    public var signedTransactionInfo: String?
    public var signedRenewalInfo: String?
    public init(status: Int32?, originalTransactionId: String?, signedTransactionInfo: String?, signedRenewalInfo: String?) {
        self.status = status
        self.originalTransactionId = originalTransactionId
        self.signedTransactionInfo = signedTransactionInfo
        self.signedRenewalInfo = signedRenewalInfo
    }
}

/// `GET /inApps/v1/lookup/{orderId}`: `status` 0 valid, 1 invalid.
public struct OrderLookupResponse: Codable, Hashable, Sendable {
    public var status: Int32?
    public var signedTransactions: [String]?
    public init(status: Int32?, signedTransactions: [String]?) {
        self.status = status
        self.signedTransactions = signedTransactions
    }
}

/// `PUT /inApps/v1/subscriptions/extend/{originalTransactionId}`.
public struct ExtendRenewalDateRequest: Codable, Hashable, Sendable {
    public var extendByDays: Int32?
    /// 0 undeclared, 1 customer satisfaction, 2 other, 3 service issue or outage.
    public var extendReasonCode: Int32?
    public var requestIdentifier: String?
    public init(extendByDays: Int32?, extendReasonCode: Int32?, requestIdentifier: String?) {
        self.extendByDays = extendByDays
        self.extendReasonCode = extendReasonCode
        self.requestIdentifier = requestIdentifier
    }
}

public struct ExtendRenewalDateResponse: Codable, Hashable, Sendable {
    public var originalTransactionId: String?
    public var webOrderLineItemId: String?
    public var success: Bool?
    public var effectiveDate: Int64?
    public init(originalTransactionId: String?, webOrderLineItemId: String?, success: Bool?, effectiveDate: Int64?) {
        self.originalTransactionId = originalTransactionId
        self.webOrderLineItemId = webOrderLineItemId
        self.success = success
        self.effectiveDate = effectiveDate
    }
}

/// `POST /inApps/v1/subscriptions/extend/mass`.
public struct MassExtendRenewalDateRequest: Codable, Hashable, Sendable {
    public var extendByDays: Int32?
    public var extendReasonCode: Int32?
    public var requestIdentifier: String?
    public var storefrontCountryCodes: [String]?
    public var productId: String?
    public init(extendByDays: Int32?, extendReasonCode: Int32?, requestIdentifier: String?, storefrontCountryCodes: [String]?, productId: String?) {
        self.extendByDays = extendByDays
        self.extendReasonCode = extendReasonCode
        self.requestIdentifier = requestIdentifier
        self.storefrontCountryCodes = storefrontCountryCodes
        self.productId = productId
    }
}

public struct MassExtendRenewalDateResponse: Codable, Hashable, Sendable {
    public var requestIdentifier: String?
    public init(requestIdentifier: String?) { self.requestIdentifier = requestIdentifier }
}

/// `GET /inApps/v1/subscriptions/extend/mass/{productId}/{requestIdentifier}`.
public struct MassExtendRenewalDateStatusResponse: Codable, Hashable, Sendable {
    public var requestIdentifier: String?
    public var complete: Bool?
    public var completeDate: Int64?
    public var succeededCount: Int64?
    public var failedCount: Int64?
    public init(requestIdentifier: String?, complete: Bool?, completeDate: Int64?, succeededCount: Int64?, failedCount: Int64?) {
        self.requestIdentifier = requestIdentifier
        self.complete = complete
        self.completeDate = completeDate
        self.succeededCount = succeededCount
        self.failedCount = failedCount
    }
}

/// `POST /inApps/v1/notifications/test`.
public struct SendTestNotificationResponse: Codable, Hashable, Sendable {
    public var testNotificationToken: String?
    public init(testNotificationToken: String?) { self.testNotificationToken = testNotificationToken }
}

/// One delivery attempt of a notification.
public struct SendAttemptItem: Codable, Hashable, Sendable {
    public var attemptDate: Int64?
    /// `SUCCESS`, `TIMED_OUT`, `TLS_ISSUE`, `CIRCULAR_REDIRECT`, `NO_RESPONSE`, `SOCKET_ISSUE`,
    /// `UNSUPPORTED_CHARSET`, `INVALID_RESPONSE`, `PREMATURE_CLOSE`, `UNSUCCESSFUL_HTTP_RESPONSE_CODE`, `OTHER`.
    public var sendAttemptResult: String?
    public init(attemptDate: Int64?, sendAttemptResult: String?) {
        self.attemptDate = attemptDate
        self.sendAttemptResult = sendAttemptResult
    }
}

/// `GET /inApps/v1/notifications/test/{testNotificationToken}`.
public struct CheckTestNotificationResponse: Codable, Hashable, Sendable {
    public var signedPayload: String?
    public var sendAttempts: [SendAttemptItem]?
    public init(signedPayload: String?, sendAttempts: [SendAttemptItem]?) {
        self.signedPayload = signedPayload
        self.sendAttempts = sendAttempts
    }
}

/// `POST /inApps/v1/notifications/history`.
public struct NotificationHistoryRequest: Codable, Hashable, Sendable {
    public var startDate: Int64?
    public var endDate: Int64?
    public var notificationType: String?
    public var notificationSubtype: String?
    public var transactionId: String?
    public var onlyFailures: Bool?
    public init(startDate: Int64?, endDate: Int64?, notificationType: String? = nil, notificationSubtype: String? = nil,
                transactionId: String? = nil, onlyFailures: Bool? = nil) {
        self.startDate = startDate
        self.endDate = endDate
        self.notificationType = notificationType
        self.notificationSubtype = notificationSubtype
        self.transactionId = transactionId
        self.onlyFailures = onlyFailures
    }
}

public struct NotificationHistoryResponse: Codable, Hashable, Sendable {
    public var paginationToken: String?
    public var hasMore: Bool?
    public var notificationHistory: [NotificationHistoryResponseItem]?
    public init(paginationToken: String?, hasMore: Bool?, notificationHistory: [NotificationHistoryResponseItem]?) {
        self.paginationToken = paginationToken
        self.hasMore = hasMore
        self.notificationHistory = notificationHistory
    }
}

public struct NotificationHistoryResponseItem: Codable, Hashable, Sendable {
    public var signedPayload: String?
    public var sendAttempts: [SendAttemptItem]?
    public init(signedPayload: String?, sendAttempts: [SendAttemptItem]?) {
        self.signedPayload = signedPayload
        self.sendAttempts = sendAttempts
    }
}

/// `PUT /inApps/v1/transactions/{originalTransactionId}/appAccountToken`.
public struct UpdateAppAccountTokenRequest: Codable, Hashable, Sendable {
    public var appAccountToken: String?
    public init(appAccountToken: String?) { self.appAccountToken = appAccountToken }
}

/// `GET /inApps/v1/transactions/appTransactions/{transactionId}`.
public struct AppTransactionInfoResponse: Codable, Hashable, Sendable {
    public var signedAppTransactionInfo: String?
    public init(signedAppTransactionInfo: String?) { self.signedAppTransactionInfo = signedAppTransactionInfo }
}

/// Every failure: `{"errorCode", "errorMessage"}`.
public struct ServerAPIErrorBody: Codable, Hashable, Sendable {
    public var errorCode: Int64?
    public var errorMessage: String?
    public init(errorCode: Int64?, errorMessage: String?) {
        self.errorCode = errorCode
        self.errorMessage = errorMessage
    }
}
