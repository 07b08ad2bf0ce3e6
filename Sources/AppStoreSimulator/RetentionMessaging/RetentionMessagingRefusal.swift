/// A Retention Messaging API request the store refuses, with Apple's HTTP status and error code.
///
/// [Apple documentation](https://developer.apple.com/documentation/retentionmessaging/error-codes)
public struct RetentionMessagingRefusal: Error, Hashable, Sendable, CustomStringConvertible {
    public let status: Int
    public let code: Int64
    public let message: String

    public init(_ status: Int, _ code: Int64, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    /// The same refusal with what was wrong added to its message.
    public func with(_ detail: String) -> RetentionMessagingRefusal { RetentionMessagingRefusal(status, code, "\(message) \(detail)") }

    public var description: String { "\(code) \(message)" }

    public static let badRequest = RetentionMessagingRefusal(400, 4_000_000, "Bad request.")
    public static let invalidTransactionId = RetentionMessagingRefusal(400, 4_000_006, "Invalid transaction id.")
    public static let invalidProductId = RetentionMessagingRefusal(400, 4_000_023, "Invalid product id.")
    public static let invalidImage = RetentionMessagingRefusal(400, 4_000_161, "Invalid image.")
    public static let headerTooLong = RetentionMessagingRefusal(400, 4_000_162, "Header too long.")
    public static let bodyTooLong = RetentionMessagingRefusal(400, 4_000_163, "Body too long.")
    public static let invalidLocale = RetentionMessagingRefusal(400, 4_000_164, "Invalid locale.")
    public static let altTextTooLong = RetentionMessagingRefusal(400, 4_000_175, "Alt text too long.")
    public static let notOriginalTransactionId = RetentionMessagingRefusal(400, 4_000_187, "The transaction id is not an original transaction id.")
    public static let invalidPerformanceTestRequest = RetentionMessagingRefusal(400, 4_000_211, "Invalid performance test request.")
    public static let invalidRequestId = RetentionMessagingRefusal(400, 4_000_212, "Invalid request id.")
    public static let existingPerformanceTestRun = RetentionMessagingRefusal(400, 4_000_213, "A performance test is already running.")
    public static let badRealtimeURL = RetentionMessagingRefusal(400, 4_000_215, "Invalid realtime URL.")
    public static let badImageSize = RetentionMessagingRefusal(400, 4_000_216, "Invalid image size.")
    public static let tooManyBulletPoints = RetentionMessagingRefusal(400, 4_000_218, "Too many bullet points.")
    public static let bulletPointTextTooLong = RetentionMessagingRefusal(400, 4_000_219, "Bullet point text too long.")
    public static let aboveImageRequiresAnImage = RetentionMessagingRefusal(400, 4_000_224, "A header above the image needs an image.")
    public static let maximumImages = RetentionMessagingRefusal(403, 4_030_014, "The maximum number of images is reached.")
    public static let maximumMessages = RetentionMessagingRefusal(403, 4_030_016, "The maximum number of messages is reached.")
    public static let messageNotApproved = RetentionMessagingRefusal(403, 4_030_017, "The message is not approved.")
    public static let imageNotApproved = RetentionMessagingRefusal(403, 4_030_018, "The image is not approved.")
    public static let imageInUse = RetentionMessagingRefusal(403, 4_030_019, "The image is in use by a message.")
    public static let noPassingTest = RetentionMessagingRefusal(403, 4_030_026, "No performance test of this URL passed.")
    public static let originalTransactionIdNotFound = RetentionMessagingRefusal(404, 4_040_005, "Original transaction id not found.")
    public static let imageNotFound = RetentionMessagingRefusal(404, 4_040_014, "Image not found.")
    public static let messageNotFound = RetentionMessagingRefusal(404, 4_040_015, "Message not found.")
    public static let performanceTestNotFound = RetentionMessagingRefusal(404, 4_040_018, "Performance test run not found.")
    public static let defaultMessageNotFound = RetentionMessagingRefusal(404, 4_040_020, "Default message not found.")
    public static let realtimeURLNotFound = RetentionMessagingRefusal(404, 4_040_021, "Realtime URL not found.")
    public static let imageAlreadyExists = RetentionMessagingRefusal(409, 4_090_000, "An image with this identifier already exists.")
    public static let messageAlreadyExists = RetentionMessagingRefusal(409, 4_090_001, "A message with this identifier already exists.")
}
