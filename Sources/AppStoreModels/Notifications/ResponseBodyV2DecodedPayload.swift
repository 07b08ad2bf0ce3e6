import Foundation

/// An App Store Server Notification V2: the payload of the `signedPayload` JWS Apple posts.
///
/// Exactly one of ``data``, ``summary``, ``externalPurchaseToken`` and ``appData`` is present.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreservernotifications/responsebodyv2decodedpayload)
public struct ResponseBodyV2DecodedPayload: SignedPayload {
    /// The event the notification reports.
    public var notificationType: NotificationTypeV2?
    /// Details of the event.
    public var subtype: Subtype?
    /// The unique identifier of the notification; retries carry the same one.
    public var notificationUUID: String?
    /// The app, environment and signed transaction and renewal info of the event.
    public var data: NotificationData?
    /// The notification format version, `2.0`.
    public var version: String?
    /// When the App Store signed this notification.
    public var signedDate: Date?
    /// The outcome of a renewal-date extension for all subscribers.
    public var summary: Summary?
    /// An external purchase token.
    public var externalPurchaseToken: ExternalPurchaseToken?
    /// The app of a consent notification.
    public var appData: AppData?

    /// Makes a payload with every field absent.
    public init() {}

    public var validationDate: Date? { signedDate }
}

/// The app, environment and signed data of a notification.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreservernotifications/data)
public struct NotificationData: Codable, Hashable, Sendable {
    /// The server environment.
    public var environment: Environment?
    /// The App Store identifier of the app.
    public var appAppleId: Int64?
    /// The bundle identifier of the app.
    public var bundleId: String?
    /// The build version of the app.
    public var bundleVersion: String?
    /// The transaction, as a JWS.
    public var signedTransactionInfo: String?
    /// The subscription renewal info, as a JWS.
    public var signedRenewalInfo: String?
    /// The subscription's renewal state.
    public var status: Status?
    /// Why the customer asked for a refund.
    public var consumptionRequestReason: ConsumptionRequestReason?

    /// Makes data with every field absent.
    public init() {}
}

/// The outcome of extending renewal dates for all eligible subscribers.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreservernotifications/summary)
public struct Summary: Codable, Hashable, Sendable {
    /// The server environment.
    public var environment: Environment?
    /// The App Store identifier of the app.
    public var appAppleId: Int64?
    /// The bundle identifier of the app.
    public var bundleId: String?
    /// The product whose subscribers were extended.
    public var productId: String?
    /// The identifier the developer gave the extension request.
    public var requestIdentifier: String?
    /// The storefronts the extension applied to.
    public var storefrontCountryCodes: [String]?
    /// How many subscriptions were extended.
    public var succeededCount: Int64?
    /// How many subscriptions could not be extended.
    public var failedCount: Int64?

    /// Makes a summary with every field absent.
    public init() {}
}

/// An external purchase token that was not reported.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreservernotifications/externalpurchasetoken)
public struct ExternalPurchaseToken: Codable, Hashable, Sendable {
    /// The identifier of the token; sandbox tokens start with `SANDBOX`.
    public var externalPurchaseId: String?
    /// When the token was created, in milliseconds since 1970.
    public var tokenCreationDate: Int64?
    /// The App Store identifier of the app.
    public var appAppleId: Int64?
    /// The bundle identifier of the app.
    public var bundleId: String?

    /// Makes a token with every field absent.
    public init() {}
}

/// The app a consent notification concerns.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreservernotifications/appdata)
public struct AppData: Codable, Hashable, Sendable {
    /// The App Store identifier of the app.
    public var appAppleId: Int64?
    /// The bundle identifier of the app.
    public var bundleId: String?
    /// The server environment.
    public var environment: Environment?
    /// The app transaction, as a JWS.
    public var signedAppTransactionInfo: String?

    /// Makes app data with every field absent.
    public init() {}
}

/// The body Apple posts to a server notification URL: `{"signedPayload": "<JWS>"}`.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreservernotifications/responsebodyv2)
public struct ResponseBodyV2: Codable, Hashable, Sendable {
    /// The notification, as a JWS.
    public var signedPayload: String

    /// Makes a body around a signed notification.
    public init(signedPayload: String) { self.signedPayload = signedPayload }
}
