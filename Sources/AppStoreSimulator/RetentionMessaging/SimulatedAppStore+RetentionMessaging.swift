import AppStoreModels
import Foundation
import StoreKitCatalog

/// What the developer configured through the Retention Messaging API, kept in the ledger (one meta
/// value, images' bytes apart), so every process sharing the store sees it.
struct RetentionMessagingSetup: Codable, Sendable {
    struct Image: Codable, Sendable {
        var identifier: String
        var size: RetentionImageSize
        var state: RetentionContentState
        var width: Int
        var height: Int
        var uploaded: Int64
    }

    struct Message: Codable, Sendable {
        var identifier: String
        var content: UploadMessageRequestBody
        var state: RetentionContentState
        var uploaded: Int64
    }

    /// In the order they were uploaded.
    var images: [Image] = []
    var messages: [Message] = []
    /// Message identifiers by product and locale.
    var defaults: [String: [String: String]] = [:]
    var realtimeURL: String?
    var performanceTests: [RetentionPerformanceTest] = []
}

/// A performance test of the real-time URL: what it was asked, and once done what it measured.
public struct RetentionPerformanceTest: Codable, Hashable, Sendable {
    public var requestId: String
    public var target: String
    public var originalTransactionId: String
    public var config: PerformanceTestConfig
    public var started: Int64
    /// `nil` while the test runs.
    public var result: PerformanceTestResultResponse?
}

extension SimulatedAppStore {
    enum RetentionMeta {
        static let setup = "retentionMessaging"
        static func image(_ identifier: String) -> String { "retentionImage.\(identifier)" }
    }

    /// Apple's limits (see docs/retention-messaging.md).
    public enum RetentionLimits {
        public static let images = 2000
        public static let messages = 2000
        public static let headerLength = 66
        public static let bodyLength = 144
        public static let altTextLength = 150
        public static let bulletPoints = 5
        public static let bulletPointTextLength = 66
        public static let realtimeURLLength = 256
        /// A full-size image is 3840 pixels wide and 160 to 2160 high.
        public static let fullSizeWidth = 3840
        public static let fullSizeHeights = 160...2160
        /// A bullet point's icon is square, 1024 by 1024 pixels.
        public static let bulletPointSide = 1024
        /// The performance test this store runs. Apple publishes only its response-time limit (about
        /// 700 ms, the real-time answer's limit); the counts are this store's own choice.
        public static let performanceTest = PerformanceTestConfig(maxConcurrentRequests: 4, totalRequests: 40, totalDuration: 60_000,
                                                                  responseTimeThreshold: 700, successRateThreshold: 95)
    }

    private func retentionSetup() throws -> RetentionMessagingSetup {
        guard let text = ledger.meta(RetentionMeta.setup), !text.isEmpty else { return RetentionMessagingSetup() }
        return try Self.decode(RetentionMessagingSetup.self, text)
    }

    /// Reads the setup, lets `body` change it, and commits it when `body` returns.
    func changingRetentionSetup<Result: Sendable>(_ body: (inout RetentionMessagingSetup, inout Change) throws -> Result) throws -> Result {
        var outcome: Swift.Result<Result, any Error>!
        try writing { (change) throws(AppStoreError) in
            do {
                var setup = try retentionSetup()
                let result = try body(&setup, &change)
                change.ledger.meta[RetentionMeta.setup] = try Self.encode(setup)
                outcome = .success(result)
            } catch let error as AppStoreError {
                throw error
            } catch {
                outcome = .failure(error)
            }
        }
        return try outcome.get()
    }

    /// A UUID as Apple's paths carry it, lower-cased; refused when it is not one.
    static func retentionIdentifier(_ text: String, refusal: RetentionMessagingRefusal) throws -> String {
        guard let uuid = UUID(uuidString: text) else { throw refusal.with("'\(text.prefix(64))' is not a UUID.") }
        return uuid.uuidString.lowercased()
    }

    // MARK: Images

    /// Upload Image: a PNG without transparency, of the size `imageSize` asks (full size by default).
    public func uploadRetentionImage(_ identifier: String, png: Data, size: RetentionImageSize = .fullSize) throws {
        let identifier = try Self.retentionIdentifier(identifier, refusal: .badRequest)
        guard RetentionImageSize.knownValues.contains(size) else { throw RetentionMessagingRefusal.badImageSize.with("'\(size.rawValue.prefix(64))'") }
        guard let info = PNGImageInfo(png) else { throw RetentionMessagingRefusal.invalidImage.with("The body is not a PNG image.") }
        guard !info.hasTransparency else { throw RetentionMessagingRefusal.invalidImage.with("The image has transparency.") }
        switch size {
        case .bulletPoint:
            guard info.width == RetentionLimits.bulletPointSide, info.height == RetentionLimits.bulletPointSide else {
                throw RetentionMessagingRefusal.invalidImage.with("A bullet point image is \(RetentionLimits.bulletPointSide) × \(RetentionLimits.bulletPointSide) pixels, not \(info.width) × \(info.height).")
            }
        default:
            guard info.width == RetentionLimits.fullSizeWidth, RetentionLimits.fullSizeHeights.contains(info.height) else {
                throw RetentionMessagingRefusal.invalidImage.with("A full-size image is \(RetentionLimits.fullSizeWidth) pixels wide and \(RetentionLimits.fullSizeHeights.lowerBound) to \(RetentionLimits.fullSizeHeights.upperBound) high, not \(info.width) × \(info.height).")
            }
        }
        let now = AppStoreJSON.milliseconds(from: clock.now())
        try changingRetentionSetup { setup, change in
            guard !setup.images.contains(where: { $0.identifier == identifier }) else { throw RetentionMessagingRefusal.imageAlreadyExists }
            guard setup.images.count < RetentionLimits.images else { throw RetentionMessagingRefusal.maximumImages }
            setup.images.append(.init(identifier: identifier, size: size, state: initialReviewState, width: info.width, height: info.height, uploaded: now))
            change.ledger.meta[RetentionMeta.image(identifier)] = png.base64EncodedString()
        }
    }

    /// Delete Image: refused while a message uses it.
    public func deleteRetentionImage(_ identifier: String) throws {
        let identifier = try Self.retentionIdentifier(identifier, refusal: .imageNotFound)
        try changingRetentionSetup { setup, change in
            guard let index = setup.images.firstIndex(where: { $0.identifier == identifier }) else { throw RetentionMessagingRefusal.imageNotFound }
            if let user = setup.messages.first(where: { $0.content.imageIdentifiers.contains(identifier) }) {
                throw RetentionMessagingRefusal.imageInUse.with("Message \(user.identifier) uses it.")
            }
            setup.images.remove(at: index)
            change.ledger.meta[RetentionMeta.image(identifier)] = ""
        }
    }

    /// Get Image List.
    public func retentionImages() throws -> GetImageListResponse {
        let setup = try reading { () throws(AppStoreError) in try retentionSetupForReading() }
        return GetImageListResponse(imageIdentifiers: setup.images.map {
            GetImageListResponseItem(imageIdentifier: $0.identifier, imageState: $0.state, imageSize: $0.size)
        })
    }

    /// An uploaded image's PNG bytes, for the pages that show a message.
    public func retentionImageData(_ identifier: String) throws -> Data? {
        let text = try reading { () throws(AppStoreError) in ledger.meta(RetentionMeta.image(identifier.lowercased())) }
        guard let text, !text.isEmpty else { return nil }
        return Data(base64Encoded: text)
    }

    func retentionSetupForReading() throws(AppStoreError) -> RetentionMessagingSetup {
        do { return try retentionSetup() } catch let error as AppStoreError { throw error } catch { throw .storage(.failed("\(error)", underlying: error)) }
    }

    // MARK: Messages

    /// Upload Message: the header, body, image and bullet points within Apple's limits; every image
    /// it names must have been uploaded.
    ///
    /// Lengths are counted as Apple's servers and libraries count a string's length: in UTF-16 code
    /// units (Java's and JavaScript's `length`), not grapheme clusters, so one "character" of a
    /// hundred combining marks is a hundred, and a text within its limit is at most three bytes per
    /// unit (198 bytes for 66).
    public func uploadRetentionMessage(_ identifier: String, _ content: UploadMessageRequestBody) throws {
        let identifier = try Self.retentionIdentifier(identifier, refusal: .badRequest)
        guard content.header.utf16.count <= RetentionLimits.headerLength else { throw RetentionMessagingRefusal.headerTooLong.with("It has \(content.header.utf16.count) characters; at most \(RetentionLimits.headerLength).") }
        guard content.body.utf16.count <= RetentionLimits.bodyLength else { throw RetentionMessagingRefusal.bodyTooLong.with("It has \(content.body.utf16.count) characters; at most \(RetentionLimits.bodyLength).") }
        if let image = content.image, image.altText.utf16.count > RetentionLimits.altTextLength { throw RetentionMessagingRefusal.altTextTooLong }
        let bullets = content.bulletPoints ?? []
        guard bullets.count <= RetentionLimits.bulletPoints else { throw RetentionMessagingRefusal.tooManyBulletPoints.with("\(bullets.count) given; at most \(RetentionLimits.bulletPoints).") }
        for bullet in bullets {
            guard bullet.text.utf16.count <= RetentionLimits.bulletPointTextLength else { throw RetentionMessagingRefusal.bulletPointTextTooLong }
            guard bullet.altText.utf16.count <= RetentionLimits.altTextLength else { throw RetentionMessagingRefusal.altTextTooLong }
        }
        if content.headerPosition == .aboveImage, content.image == nil { throw RetentionMessagingRefusal.aboveImageRequiresAnImage }
        if let position = content.headerPosition, !RetentionHeaderPosition.knownValues.contains(position) {
            throw RetentionMessagingRefusal.badRequest.with("Unknown headerPosition '\(position.rawValue.prefix(64))'.")
        }
        var normalized = content
        normalized.image?.imageIdentifier = try Self.retentionIdentifier(content.image?.imageIdentifier ?? UUID().uuidString, refusal: .imageNotFound)
        if content.image == nil { normalized.image = nil }
        normalized.bulletPoints = try content.bulletPoints?.map { bullet in
            var bullet = bullet
            bullet.imageIdentifier = try Self.retentionIdentifier(bullet.imageIdentifier, refusal: .imageNotFound)
            return bullet
        }
        let now = AppStoreJSON.milliseconds(from: clock.now())
        try changingRetentionSetup { setup, _ in
            guard !setup.messages.contains(where: { $0.identifier == identifier }) else { throw RetentionMessagingRefusal.messageAlreadyExists }
            guard setup.messages.count < RetentionLimits.messages else { throw RetentionMessagingRefusal.maximumMessages }
            for image in normalized.imageIdentifiers where !setup.images.contains(where: { $0.identifier == image }) {
                throw RetentionMessagingRefusal.imageNotFound.with("No image \(image) was uploaded.")
            }
            setup.messages.append(.init(identifier: identifier, content: normalized, state: initialReviewState, uploaded: now))
        }
    }

    /// Delete Message; the defaults that showed it are removed with it.
    public func deleteRetentionMessage(_ identifier: String) throws {
        let identifier = try Self.retentionIdentifier(identifier, refusal: .messageNotFound)
        try changingRetentionSetup { setup, _ in
            guard let index = setup.messages.firstIndex(where: { $0.identifier == identifier }) else { throw RetentionMessagingRefusal.messageNotFound }
            setup.messages.remove(at: index)
            for (product, locales) in setup.defaults {
                setup.defaults[product] = locales.filter { $0.value != identifier }
                if setup.defaults[product]?.isEmpty == true { setup.defaults[product] = nil }
            }
        }
    }

    /// Get Message List.
    public func retentionMessages() throws -> GetMessageListResponse {
        let setup = try reading { () throws(AppStoreError) in try retentionSetupForReading() }
        return GetMessageListResponse(messageIdentifiers: setup.messages.map {
            GetMessageListResponseItem(messageIdentifier: $0.identifier, messageState: $0.state)
        })
    }

    /// An uploaded message's content and state.
    public func retentionMessage(_ identifier: String) throws -> (content: UploadMessageRequestBody, state: RetentionContentState)? {
        let setup = try reading { () throws(AppStoreError) in try retentionSetupForReading() }
        return setup.messages.first { $0.identifier == identifier.lowercased() }.map { ($0.content, $0.state) }
    }

    // MARK: Review

    /// Where an upload's review starts: approved at once in the sandbox, as Apple's sandbox does;
    /// pending elsewhere until ``reviewRetentionContent(_:state:)`` approves or rejects it.
    nonisolated var initialReviewState: RetentionContentState { identity.environment == .sandbox ? .approved : .pending }

    /// Approves or rejects an uploaded image or message, as App Store review would; `identifier`
    /// names either.
    public func reviewRetentionContent(_ identifier: String, state: RetentionContentState) throws {
        guard state == .approved || state == .rejected || state == .pending else {
            throw AppStoreError.control(.invalidAction, "a review approves or rejects, not '\(state.rawValue)'")
        }
        let identifier = identifier.lowercased()
        try changingRetentionSetup { setup, _ in
            if let index = setup.images.firstIndex(where: { $0.identifier == identifier }) {
                setup.images[index].state = state
            } else if let index = setup.messages.firstIndex(where: { $0.identifier == identifier }) {
                setup.messages[index].state = state
            } else {
                throw AppStoreError.control(.invalidAction, "no image or message \(identifier) was uploaded")
            }
        }
    }

    // MARK: Default messages

    /// Configure Default Message: an approved message (and its approved images) for an
    /// auto-renewable subscription in a locale.
    public func configureDefaultRetentionMessage(productID: String, locale: String, messageIdentifier: String?) throws {
        try Self.checkRetentionLocale(locale)
        guard catalog().product(id: productID)?.kind == .autoRenewable else {
            throw RetentionMessagingRefusal.invalidProductId.with("'\(productID.prefix(64))' is not an auto-renewable subscription of this app.")
        }
        guard let messageIdentifier else { throw RetentionMessagingRefusal.badRequest.with("messageIdentifier is required.") }
        let identifier = try Self.retentionIdentifier(messageIdentifier, refusal: .messageNotFound)
        try changingRetentionSetup { setup, _ in
            guard let message = setup.messages.first(where: { $0.identifier == identifier }) else { throw RetentionMessagingRefusal.messageNotFound }
            guard message.state == .approved else { throw RetentionMessagingRefusal.messageNotApproved }
            for image in message.content.imageIdentifiers where setup.images.first(where: { $0.identifier == image })?.state != .approved {
                throw RetentionMessagingRefusal.imageNotApproved.with("Image \(image).")
            }
            setup.defaults[productID, default: [:]][locale] = identifier
        }
    }

    /// Get Default Message.
    public func defaultRetentionMessage(productID: String, locale: String) throws -> String {
        try Self.checkRetentionLocale(locale)
        let setup = try reading { () throws(AppStoreError) in try retentionSetupForReading() }
        guard let identifier = setup.defaults[productID]?[locale] else { throw RetentionMessagingRefusal.defaultMessageNotFound }
        return identifier
    }

    /// Delete Default Message (nothing to delete is not an error: Apple documents none).
    public func deleteDefaultRetentionMessage(productID: String, locale: String) throws {
        try Self.checkRetentionLocale(locale)
        try changingRetentionSetup { setup, _ in
            setup.defaults[productID]?[locale] = nil
            if setup.defaults[productID]?.isEmpty == true { setup.defaults[productID] = nil }
        }
    }

    /// A locale as App Store Connect writes it, case and all: a lower-case language code, then
    /// optionally `-` and an upper-case region (`en-US`) or a script (`zh-Hans`).
    static func checkRetentionLocale(_ locale: String) throws {
        let parts = locale.split(separator: "-", omittingEmptySubsequences: false)
        let language = parts[0]
        let languageValid = (2...3).contains(language.count) && language.allSatisfy { $0.isASCII && $0.isLowercase }
        let subtagValid = parts.count == 1 || (parts.count == 2 && {
            let tag = parts[1]
            let region = tag.count == 2 && tag.allSatisfy { $0.isASCII && $0.isUppercase }
            let script = tag.count == 4 && tag.first!.isUppercase && tag.allSatisfy { $0.isASCII && $0.isLetter } && tag.dropFirst().allSatisfy(\.isLowercase)
            return region || script
        }())
        guard languageValid, subtagValid else { throw RetentionMessagingRefusal.invalidLocale.with("'\(locale.prefix(64))' is not a locale such as en-US.") }
    }

    // MARK: The real-time URL

    /// Configure Realtime URL: an https URL of at most 256 characters, as Apple requires, or an http
    /// URL on this machine (a local `backend serve`). A store signing as Production needs a passing
    /// performance test of the URL first, as Apple's does.
    public func configureRetentionRealtimeURL(_ url: String?) throws {
        guard let url, Self.isAcceptableRealtimeURL(url) else { throw RetentionMessagingRefusal.badRealtimeURL.with("An https URL (or http on this machine) of at most \(RetentionLimits.realtimeURLLength) characters is needed.") }
        let production = identity.environment == .production
        try changingRetentionSetup { setup, _ in
            if production, !setup.performanceTests.contains(where: { $0.target == url && $0.result?.result == .pass }) {
                throw RetentionMessagingRefusal.noPassingTest
            }
            setup.realtimeURL = url
        }
    }

    /// Whether Set Realtime URL takes `url`: https, or http on this machine, of at most 256
    /// characters. Checked again whenever a stored URL is used: a store folder is data, and one
    /// written by hand (or by an older version) may hold any text.
    public static func isAcceptableRealtimeURL(_ url: String) -> Bool {
        guard url.count <= RetentionLimits.realtimeURLLength, let parsed = URL(string: url),
              let scheme = parsed.scheme?.lowercased(), let host = parsed.host?.lowercased(), !host.isEmpty else { return false }
        return scheme == "https" || (scheme == "http" && ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host))
    }

    /// Get Realtime URL.
    public func retentionRealtimeURL() throws -> String? {
        try reading { () throws(AppStoreError) in try retentionSetupForReading() }.realtimeURL
    }

    /// Delete Realtime URL (nothing to delete is not an error: Apple documents none).
    public func deleteRetentionRealtimeURL() throws {
        try changingRetentionSetup { setup, _ in
            setup.realtimeURL = nil
        }
    }

    // MARK: Performance tests

    /// Initiate Performance Test: records a test of the configured URL with one of the app's
    /// subscriptions; the server runs it (``recordPerformanceTestResult(_:)``).
    public func startRetentionPerformanceTest(originalTransactionId: String?) throws -> RetentionPerformanceTest {
        guard let text = originalTransactionId, !text.isEmpty else { throw RetentionMessagingRefusal.invalidPerformanceTestRequest.with("originalTransactionId is required.") }
        guard let id = UInt64(text) else { throw RetentionMessagingRefusal.invalidTransactionId.with("'\(text.prefix(64))'") }
        let requestId = identifiers().uuidString.lowercased()
        let now = AppStoreJSON.milliseconds(from: clock.now())
        return try changingRetentionSetup { setup, change in
            guard let transaction = storedTransaction(id, in: change) else { throw RetentionMessagingRefusal.originalTransactionIdNotFound }
            guard transaction.originalID == transaction.id else { throw RetentionMessagingRefusal.notOriginalTransactionId }
            guard transaction.productKind == .autoRenewable else { throw RetentionMessagingRefusal.invalidPerformanceTestRequest.with("Transaction \(id) is not a subscription's.") }
            guard let target = setup.realtimeURL else { throw RetentionMessagingRefusal.realtimeURLNotFound }
            guard !setup.performanceTests.contains(where: { $0.result == nil }) else { throw RetentionMessagingRefusal.existingPerformanceTestRun }
            let test = RetentionPerformanceTest(requestId: requestId, target: target, originalTransactionId: text,
                                                config: RetentionLimits.performanceTest, started: now, result: nil)
            setup.performanceTests.append(test)
            return test
        }
    }

    /// A performance test, by the request id Initiate Performance Test answered.
    public func retentionPerformanceTest(_ requestId: String) throws -> RetentionPerformanceTest {
        guard let uuid = UUID(uuidString: requestId) else { throw RetentionMessagingRefusal.invalidRequestId.with("'\(requestId.prefix(64))' is not a UUID.") }
        let setup = try reading { () throws(AppStoreError) in try retentionSetupForReading() }
        guard let test = setup.performanceTests.first(where: { $0.requestId == uuid.uuidString.lowercased() }) else {
            throw RetentionMessagingRefusal.performanceTestNotFound
        }
        return test
    }

    /// Records what a performance test measured (by the server that ran it).
    public func recordPerformanceTestResult(requestId: String, _ result: PerformanceTestResultResponse) throws {
        try changingRetentionSetup { setup, _ in
            guard let index = setup.performanceTests.firstIndex(where: { $0.requestId == requestId }) else {
                throw RetentionMessagingRefusal.performanceTestNotFound
            }
            setup.performanceTests[index].result = result
        }
    }

    /// The body the App Store posts to the developer's Get Retention Message endpoint: a
    /// `signedPayload` the store signs as it signs notifications, under a new request identifier.
    public nonisolated func signedRealtimeRequest(originalTransactionId: String, productId: String, userLocale: String,
                                                  at date: Date) throws(AppStoreError) -> (requestIdentifier: String, signedPayload: String) {
        let requestIdentifier = identifiers().uuidString.lowercased()
        let payload = DecodedRealtimeRequestBody(originalTransactionId: originalTransactionId, appAppleId: identity.appAppleId ?? 0,
                                                 productId: productId, userLocale: userLocale, requestIdentifier: requestIdentifier,
                                                 signedDate: AppStoreJSON.milliseconds(from: date), environment: identity.environment)
        return (requestIdentifier, try sign(payload, at: date))
    }
}

extension UploadMessageRequestBody {
    /// Every image the message shows: its own and its bullet points' icons.
    var imageIdentifiers: [String] {
        (image.map { [$0.imageIdentifier] } ?? []) + (bulletPoints ?? []).map(\.imageIdentifier)
    }
}
