import AppStoreModels
@testable import AppStoreSimulator
import AppStoreSimulatorSQL
import Foundation
import Testing
import TestSupport

/// The Retention Messaging API's rules in the store: review states, what a default needs, what the
/// ledger keeps across processes, and the checks of images and locales.
@Suite struct RetentionMessagingTests {
    /// The chunks of a PNG the store reads (the pixel data is not decoded, so it is left empty).
    static func png(width: Int, height: Int, colourType: UInt8 = 2, transparencyChunk: Bool = false) -> Data {
        func be32(_ value: Int) -> [UInt8] { [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] { be32(data.count) + Array(type.utf8) + data + [0, 0, 0, 0] }
        var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        bytes += chunk("IHDR", be32(width) + be32(height) + [8, colourType, 0, 0, 0])
        if transparencyChunk { bytes += chunk("tRNS", [0, 0, 0, 0, 0, 0]) }
        bytes += chunk("IDAT", [0x78, 0x01]) + chunk("IEND", [])
        return Data(bytes)
    }

    /// A full-size PNG padded to about `bytes` with a private chunk, as a real photograph would be.
    static func largePNG(bytes: Int) -> Data {
        var data = png(width: 3840, height: 400)
        let iend = data.suffix(12)
        data.removeLast(12)
        let length = bytes
        data.append(contentsOf: [UInt8(length >> 24 & 0xFF), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)])
        data.append(contentsOf: Array("prVt".utf8))
        data.append(Data(repeating: 0x5A, count: length))
        data.append(contentsOf: [0, 0, 0, 0])
        data.append(iend)
        return data
    }

    @Test("uploaded images stay on disk in the store, not in its memory: 40 images of 300 KB leave the store's cache small, and each reads back whole")
    func imagesStayOnDisk() async throws {
        let scratch = Scratch()
        let (directory, store) = try await TestStores.directory(in: scratch, environment: .xcode)
        let storage = try #require(store.storage as? SQLLedgerStorage)
        let image = Self.largePNG(bytes: 300_000)
        let identifiers = (0..<40).map { _ in UUID().uuidString.lowercased() }
        for identifier in identifiers {
            try await store.uploadRetentionImage(identifier, png: image)
            #expect(try await store.retentionImageData(identifier) == image)
        }
        #expect(storage.cachedMetaBytes < 1_000_000, "\(storage.cachedMetaBytes) bytes of images kept in memory")
        let reopened = try await TestStores.open(directory)
        #expect(try await reopened.retentionImageData(identifiers[7]) == image)
    }

    static func refusal(_ body: () async throws -> Void) async -> Int64? {
        do { try await body() } catch let refusal as RetentionMessagingRefusal { return refusal.code } catch { return -1 }
        return nil
    }

    @Test("outside the sandbox uploads wait for review; a default needs its message and its images approved; all of it is kept in the ledger")
    func reviewAndDefaults() async throws {
        let scratch = Scratch()
        let (directory, store) = try await TestStores.directory(in: scratch, environment: .xcode)
        let image = UUID().uuidString, bullet = UUID().uuidString, message = UUID().uuidString
        try await store.uploadRetentionImage(image, png: Self.png(width: 3840, height: 400))
        try await store.uploadRetentionImage(bullet, png: Self.png(width: 1024, height: 1024), size: .bulletPoint)
        try await store.uploadRetentionMessage(message, UploadMessageRequestBody(
            header: "Stay a little longer", body: "Your plans stay in sync.", image: UploadMessageImage(imageIdentifier: image, altText: "Plans"),
            headerPosition: .aboveImage, bulletPoints: [BulletPoint(text: "Unlimited plans", imageIdentifier: bullet, altText: "Plan")]))
        #expect(try await store.retentionImages().imageIdentifiers?.map(\.imageState) == [.pending, .pending])
        #expect(try await store.retentionMessages().messageIdentifiers?.map(\.messageState) == [.pending])

        let product = ExampleShop.standardMonthly
        let configure = { try await store.configureDefaultRetentionMessage(productID: product, locale: "en-US", messageIdentifier: message) }
        #expect(await Self.refusal(configure) == 4_030_017, "the message is not approved yet")
        try await store.reviewRetentionContent(message, state: .approved)
        #expect(await Self.refusal(configure) == 4_030_018, "its image is not approved yet")
        try await store.reviewRetentionContent(image, state: .approved)
        #expect(await Self.refusal(configure) == 4_030_018, "nor its bullet point's")
        try await store.reviewRetentionContent(bullet, state: .rejected)
        #expect(await Self.refusal(configure) == 4_030_018, "a rejected image is never shown")
        try await store.reviewRetentionContent(bullet, state: .approved)
        #expect(await Self.refusal(configure) == nil)
        #expect(await Self.refusal { try await store.deleteRetentionImage(bullet) } == 4_030_019, "a message uses it")

        // Another process opening the store sees all of it, the image's bytes included.
        let reopened = try await TestStores.open(directory)
        #expect(try await reopened.defaultRetentionMessage(productID: product, locale: "en-US") == message.lowercased())
        #expect(try await reopened.retentionImageData(image) == Self.png(width: 3840, height: 400))
        #expect(try await reopened.retentionMessage(message)?.content.bulletPoints?.first?.text == "Unlimited plans")
        #expect(try await reopened.retentionImages().imageIdentifiers?.map(\.imageState) == [.approved, .approved])
    }

    @Test("text limits count UTF-16 code units as Apple does, not grapheme clusters: one 'character' of 100,000 combining marks is refused (#53)")
    func limitsCountAppleUnits() async throws {
        let scratch = Scratch()
        let (_, store) = try await TestStores.directory(in: scratch, environment: .sandbox)
        let upload = { (header: String, body: String, bullet: String) in
            try await store.uploadRetentionMessage(UUID().uuidString, UploadMessageRequestBody(
                header: header, body: body, bulletPoints: bullet.isEmpty ? nil : [BulletPoint(text: bullet, imageIdentifier: UUID().uuidString, altText: "x")]))
        }
        let huge = "a" + String(repeating: "\u{0301}", count: 100_000)
        #expect(huge.count == 1 && huge.utf8.count > 200_000)
        #expect(await Self.refusal { try await upload(huge, "body", "") } == RetentionMessagingRefusal.headerTooLong.code)
        #expect(await Self.refusal { try await upload("header", huge, "") } == RetentionMessagingRefusal.bodyTooLong.code)
        #expect(await Self.refusal { try await upload("header", "body", huge) } == RetentionMessagingRefusal.bulletPointTextTooLong.code)
        // 34 emoji are 34 graphemes but 68 UTF-16 units: over 66. 66 "é" (one unit each) fit.
        #expect(await Self.refusal { try await upload(String(repeating: "😀", count: 34), "body", "") } == RetentionMessagingRefusal.headerTooLong.code)
        #expect(await Self.refusal { try await upload(String(repeating: "é", count: 66), String(repeating: "x", count: 144), "") } == nil)
    }

    @Test("a store signing as Production takes a real-time URL only after a performance test of it passed")
    func productionNeedsAPassingTest() async throws {
        let scratch = Scratch()
        let (_, store) = try await TestStores.directory(in: scratch, environment: .production)
        #expect(await Self.refusal { try await store.configureRetentionRealtimeURL("https://retention.example.com/message") } == 4_030_026)
        #expect(try await store.retentionRealtimeURL() == nil)
    }

    @Test("images: PNG only, without transparency, at Apple's sizes")
    func imageChecks() async throws {
        let scratch = Scratch()
        let (_, store) = try await TestStores.directory(in: scratch, environment: .xcode)
        func upload(_ data: Data, _ size: RetentionImageSize = .fullSize) async -> Int64? {
            await Self.refusal { try await store.uploadRetentionImage(UUID().uuidString, png: data, size: size) }
        }
        #expect(await upload(Self.png(width: 3840, height: 160)) == nil)
        #expect(await upload(Self.png(width: 3840, height: 2160)) == nil)
        #expect(await upload(Self.png(width: 3840, height: 2161)) == 4_000_161)
        #expect(await upload(Self.png(width: 1920, height: 400)) == 4_000_161)
        #expect(await upload(Self.png(width: 3840, height: 400, colourType: 6)) == 4_000_161, "an alpha channel")
        #expect(await upload(Self.png(width: 3840, height: 400, colourType: 3, transparencyChunk: true)) == 4_000_161, "a transparent palette entry")
        #expect(await upload(Data("GIF89a".utf8)) == 4_000_161)
        #expect(await upload(Self.png(width: 3840, height: 400).prefix(40)) == 4_000_161, "cut short")
        #expect(await upload(Self.png(width: 1024, height: 1024), .bulletPoint) == nil)
        #expect(await upload(Self.png(width: 3840, height: 400), .bulletPoint) == 4_000_161)
        #expect(await upload(Self.png(width: 1024, height: 1024), RetentionImageSize(rawValue: "HUGE")) == 4_000_216)
        #expect(await Self.refusal { try await store.uploadRetentionImage("not-a-uuid", png: Self.png(width: 3840, height: 400)) } == 4_000_000)
    }

    @Test("locales as App Store Connect writes them")
    func locales() async throws {
        let scratch = Scratch()
        let (_, store) = try await TestStores.directory(in: scratch, environment: .sandbox)
        for locale in ["en-US", "zh-Hans", "de", "pt-BR"] {
            #expect(await Self.refusal { try await store.deleteDefaultRetentionMessage(productID: ExampleShop.standardMonthly, locale: locale) } == nil, "\(locale)")
        }
        for locale in ["en_US", "EN-US", "english", "en-us", "", "en-US-x", "e1-US"] {
            #expect(await Self.refusal { try await store.deleteDefaultRetentionMessage(productID: ExampleShop.standardMonthly, locale: locale) } == 4_000_164, "\(locale)")
        }
    }
}
