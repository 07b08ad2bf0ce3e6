import Foundation

// The Retention Messaging API's bodies, with Apple's field names and raw values:
// https://developer.apple.com/documentation/retentionmessaging

/// Whether App Store review approved an uploaded image or message.
///
/// [Apple documentation](https://developer.apple.com/documentation/retentionmessaging/imagestate)
public struct RetentionContentState: AppStoreEnumeration {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Uploaded, waiting for review.
    public static let pending = RetentionContentState(rawValue: "PENDING")
    /// Approved: the system may show it.
    public static let approved = RetentionContentState(rawValue: "APPROVED")
    /// Rejected: it is never shown.
    public static let rejected = RetentionContentState(rawValue: "REJECTED")

    public static let knownValues: [RetentionContentState] = [.pending, .approved, .rejected]
}

/// What an image is for: above a message's body, or a bullet point's icon.
///
/// [Apple documentation](https://developer.apple.com/documentation/retentionmessaging/imagesize)
public struct RetentionImageSize: AppStoreEnumeration {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let fullSize = RetentionImageSize(rawValue: "FULL_SIZE")
    public static let bulletPoint = RetentionImageSize(rawValue: "BULLET_POINT")

    public static let knownValues: [RetentionImageSize] = [.fullSize, .bulletPoint]
}

/// Where a message's header goes.
///
/// [Apple documentation](https://developer.apple.com/documentation/retentionmessaging/headerposition)
public struct RetentionHeaderPosition: AppStoreEnumeration {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let aboveBody = RetentionHeaderPosition(rawValue: "ABOVE_BODY")
    public static let aboveImage = RetentionHeaderPosition(rawValue: "ABOVE_IMAGE")

    public static let knownValues: [RetentionHeaderPosition] = [.aboveBody, .aboveImage]
}

/// An image with its alternative text, in a message.
public struct UploadMessageImage: Codable, Hashable, Sendable {
    public var imageIdentifier: String
    public var altText: String
    public init(imageIdentifier: String, altText: String) {
        self.imageIdentifier = imageIdentifier
        self.altText = altText
    }
}

/// A bullet point of a message: its text and its icon.
public struct BulletPoint: Codable, Hashable, Sendable {
    public var text: String
    public var imageIdentifier: String
    public var altText: String
    public init(text: String, imageIdentifier: String, altText: String) {
        self.text = text
        self.imageIdentifier = imageIdentifier
        self.altText = altText
    }
}

/// The body of Upload Message.
public struct UploadMessageRequestBody: Codable, Hashable, Sendable {
    public var header: String
    public var body: String
    public var image: UploadMessageImage?
    public var headerPosition: RetentionHeaderPosition?
    public var bulletPoints: [BulletPoint]?
    public init(header: String, body: String, image: UploadMessageImage? = nil, headerPosition: RetentionHeaderPosition? = nil,
                bulletPoints: [BulletPoint]? = nil) {
        self.header = header
        self.body = body
        self.image = image
        self.headerPosition = headerPosition
        self.bulletPoints = bulletPoints
    }
}

public struct GetImageListResponseItem: Codable, Hashable, Sendable {
    public var imageIdentifier: String?
    public var imageState: RetentionContentState?
    public var imageSize: RetentionImageSize?
    public init(imageIdentifier: String?, imageState: RetentionContentState?, imageSize: RetentionImageSize?) {
        self.imageIdentifier = imageIdentifier
        self.imageState = imageState
        self.imageSize = imageSize
    }
}

public struct GetImageListResponse: Codable, Hashable, Sendable {
    public var imageIdentifiers: [GetImageListResponseItem]?
    public init(imageIdentifiers: [GetImageListResponseItem]?) { self.imageIdentifiers = imageIdentifiers }
}

public struct GetMessageListResponseItem: Codable, Hashable, Sendable {
    public var messageIdentifier: String?
    public var messageState: RetentionContentState?
    public init(messageIdentifier: String?, messageState: RetentionContentState?) {
        self.messageIdentifier = messageIdentifier
        self.messageState = messageState
    }
}

public struct GetMessageListResponse: Codable, Hashable, Sendable {
    public var messageIdentifiers: [GetMessageListResponseItem]?
    public init(messageIdentifiers: [GetMessageListResponseItem]?) { self.messageIdentifiers = messageIdentifiers }
}

/// The body of Configure Default Message, and the answer of Get Default Message.
public struct DefaultConfigurationRequest: Codable, Hashable, Sendable {
    public var messageIdentifier: String?
    public init(messageIdentifier: String?) { self.messageIdentifier = messageIdentifier }
}

/// The body of Configure Realtime URL, and the answer of Get Realtime URL.
public struct RealtimeUrlRequest: Codable, Hashable, Sendable {
    public var realtimeURL: String?
    public init(realtimeURL: String?) { self.realtimeURL = realtimeURL }
}

/// The body of Initiate Performance Test.
public struct PerformanceTestRequest: Codable, Hashable, Sendable {
    public var originalTransactionId: String?
    public init(originalTransactionId: String?) { self.originalTransactionId = originalTransactionId }
}

/// How a performance test runs and what it must reach.
///
/// [Apple documentation](https://developer.apple.com/documentation/retentionmessaging/performancetestconfig)
public struct PerformanceTestConfig: Codable, Hashable, Sendable {
    public var maxConcurrentRequests: Int?
    public var totalRequests: Int?
    /// Milliseconds.
    public var totalDuration: Int64?
    /// Milliseconds.
    public var responseTimeThreshold: Int64?
    /// Percent.
    public var successRateThreshold: Int?
    public init(maxConcurrentRequests: Int?, totalRequests: Int?, totalDuration: Int64?, responseTimeThreshold: Int64?, successRateThreshold: Int?) {
        self.maxConcurrentRequests = maxConcurrentRequests
        self.totalRequests = totalRequests
        self.totalDuration = totalDuration
        self.responseTimeThreshold = responseTimeThreshold
        self.successRateThreshold = successRateThreshold
    }
}

public struct PerformanceTestResponse: Codable, Hashable, Sendable {
    public var config: PerformanceTestConfig?
    public var requestId: String?
    public init(config: PerformanceTestConfig?, requestId: String?) {
        self.config = config
        self.requestId = requestId
    }
}

/// A performance test's outcome.
public struct PerformanceTestStatus: AppStoreEnumeration {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let pending = PerformanceTestStatus(rawValue: "PENDING")
    public static let pass = PerformanceTestStatus(rawValue: "PASS")
    public static let fail = PerformanceTestStatus(rawValue: "FAIL")

    public static let knownValues: [PerformanceTestStatus] = [.pending, .pass, .fail]
}

/// Response times of a performance test, in milliseconds.
public struct PerformanceTestResponseTimes: Codable, Hashable, Sendable {
    public var average: Int64?
    public var p50: Int64?
    public var p90: Int64?
    public var p95: Int64?
    public var p99: Int64?
    public init(average: Int64?, p50: Int64?, p90: Int64?, p95: Int64?, p99: Int64?) {
        self.average = average
        self.p50 = p50
        self.p90 = p90
        self.p95 = p95
        self.p99 = p99
    }
}

/// The answer of Get Performance Test Results.
public struct PerformanceTestResultResponse: Codable, Hashable, Sendable {
    public var config: PerformanceTestConfig?
    /// The URL tested.
    public var target: String?
    public var result: PerformanceTestStatus?
    /// Percent of requests answered well within the time limit.
    public var successRate: Int?
    public var numPending: Int?
    public var responseTimes: PerformanceTestResponseTimes?
    /// How many requests failed, by `sendAttemptResult` raw value.
    public var failures: [String: Int]?
    public init(config: PerformanceTestConfig?, target: String?, result: PerformanceTestStatus?, successRate: Int?, numPending: Int?,
                responseTimes: PerformanceTestResponseTimes?, failures: [String: Int]?) {
        self.config = config
        self.target = target
        self.result = result
        self.successRate = successRate
        self.numPending = numPending
        self.responseTimes = responseTimes
        self.failures = failures
    }
}

/// What the App Store posts to the developer's Get Retention Message endpoint.
public struct RealtimeRequestBody: Codable, Hashable, Sendable {
    /// A JWS whose payload is a ``DecodedRealtimeRequestBody``.
    public var signedPayload: String?
    public init(signedPayload: String?) { self.signedPayload = signedPayload }
}

/// The signed payload of a real-time request: whose subscription, which product, which locale.
///
/// [Apple documentation](https://developer.apple.com/documentation/retentionmessaging/decodedrealtimerequestbody)
public struct DecodedRealtimeRequestBody: SignedPayload {
    public var originalTransactionId: String
    public var appAppleId: Int64
    public var productId: String
    public var userLocale: String
    public var requestIdentifier: String
    /// Milliseconds since 1970.
    public var signedDate: Int64
    public var environment: Environment
    public init(originalTransactionId: String, appAppleId: Int64, productId: String, userLocale: String, requestIdentifier: String,
                signedDate: Int64, environment: Environment) {
        self.originalTransactionId = originalTransactionId
        self.appAppleId = appAppleId
        self.productId = productId
        self.userLocale = userLocale
        self.requestIdentifier = requestIdentifier
        self.signedDate = signedDate
        self.environment = environment
    }
}

/// A message chosen in real time.
public struct RealtimeMessage: Codable, Hashable, Sendable {
    public var messageIdentifier: String?
    public init(messageIdentifier: String?) { self.messageIdentifier = messageIdentifier }
}

/// A switch-plan suggestion chosen in real time.
public struct AlternateProduct: Codable, Hashable, Sendable {
    public var messageIdentifier: String?
    public var productId: String?
    public var billingPlanType: BillingPlanType?
    public init(messageIdentifier: String?, productId: String?, billingPlanType: BillingPlanType? = nil) {
        self.messageIdentifier = messageIdentifier
        self.productId = productId
        self.billingPlanType = billingPlanType
    }
}

/// The first version of a promotional offer's signature, as an app computes it for StoreKit.
public struct PromotionalOfferSignatureV1: Codable, Hashable, Sendable {
    public var encodedSignature: String
    public var productId: String
    public var nonce: String
    public var timestamp: Int64
    public var keyId: String
    public var offerIdentifier: String
    public var appAccountToken: String?
    public init(encodedSignature: String, productId: String, nonce: String, timestamp: Int64, keyId: String, offerIdentifier: String,
                appAccountToken: String? = nil) {
        self.encodedSignature = encodedSignature
        self.productId = productId
        self.nonce = nonce
        self.timestamp = timestamp
        self.keyId = keyId
        self.offerIdentifier = offerIdentifier
        self.appAccountToken = appAccountToken
    }
}

/// A promotional offer chosen in real time, signed by the developer.
public struct RealtimePromotionalOffer: Codable, Hashable, Sendable {
    public var messageIdentifier: String?
    /// A JWS signed with the developer's In-App Purchase key.
    public var promotionalOfferSignatureV2: String?
    public var promotionalOfferSignatureV1: PromotionalOfferSignatureV1?
    public init(messageIdentifier: String?, promotionalOfferSignatureV2: String? = nil, promotionalOfferSignatureV1: PromotionalOfferSignatureV1? = nil) {
        self.messageIdentifier = messageIdentifier
        self.promotionalOfferSignatureV2 = promotionalOfferSignatureV2
        self.promotionalOfferSignatureV1 = promotionalOfferSignatureV1
    }
}

/// The developer's answer to a real-time request: one of a message, a switch-plan suggestion or a
/// promotional offer.
///
/// [Apple documentation](https://developer.apple.com/documentation/retentionmessaging/realtimeresponsebody)
public struct RealtimeResponseBody: Codable, Hashable, Sendable {
    public var message: RealtimeMessage?
    public var alternateProduct: AlternateProduct?
    public var promotionalOffer: RealtimePromotionalOffer?
    public init(message: RealtimeMessage? = nil, alternateProduct: AlternateProduct? = nil, promotionalOffer: RealtimePromotionalOffer? = nil) {
        self.message = message
        self.alternateProduct = alternateProduct
        self.promotionalOffer = promotionalOffer
    }
}

extension DecodedRealtimeRequestBody {
    public var validationDate: Date? { AppStoreJSON.date(fromMilliseconds: signedDate) }
}
