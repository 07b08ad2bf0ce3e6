import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import Foundation
import Testing
import TestSupport

/// The Retention Messaging API of `storekit serve`, attacked as its own process over sockets (#53):
/// a 400 KB header of one grapheme (item 11), and a pile of large images that must not pile up in the
/// server's memory (item 14). `RetentionMessagingTests` checks the same rules on the store in process.
@Suite(.timeLimit(.minutes(10)), .enabled(if: Built.available, "the storekit binary is not built; run swift build first"))
struct ServedRetentionAttackTests {
    /// A store folder with an In-App Purchase key, and a way to make the key's bearer tokens.
    struct Folder {
        let scratch = Scratch()
        let url: URL
        let key: P256PrivateKey
        let record: APIKeyRecord

        init(environment: AppStoreModels.Environment) async throws {
            let made = try await TestStores.directory(in: scratch, environment: environment)
            url = made.url
            key = try P256PrivateKey.generate()
            record = try await made.store.registerAPIKey(publicKeyPEM: try key.publicKey.pemRepresentation)
        }

        func token() throws -> String {
            try ServerAPIToken.make(key: key, keyId: record.keyId, issuerId: record.issuerId, bundleId: "com.example.shop", issuedAt: Date())
        }
    }

    /// `PUT /inApps/v1/messaging/message/ID` with `json` (raw UTF-8) written byte for byte on a socket.
    static func uploadMessage(_ json: String, id: String, port: UInt16, token: String) async -> RawHTTP.Answer {
        await RawHTTP.exchange(port: port, "PUT /inApps/v1/messaging/message/\(id) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
                               + "Authorization: Bearer \(token)\r\nContent-Type: application/json\r\nContent-Length: \(json.utf8.count)\r\n"
                               + "Connection: close\r\n\r\n" + json)
    }

    /// Apple's `errorCode` in an answer's body.
    static func errorCode(_ answer: RawHTTP.Answer) -> Int? {
        guard let start = answer.text.range(of: "\r\n\r\n")?.upperBound,
              let json = try? JSONSerialization.jsonObject(with: Data(answer.text[start...].utf8)) as? [String: Any] else { return nil }
        return json["errorCode"] as? Int
    }

    /// A JSON string literal of `text` (its UTF-8 as is; quotes and backslashes never occur here).
    static func quoted(_ text: String) -> String { "\"" + text + "\"" }

    @Test("item 11: a 400 KB header, body or bullet point of one grapheme sent on a socket is refused with Apple's error; exactly 66 UTF-16 units (33 emoji, 66 'é') and 144 for the body are accepted")
    func oneGraphemeOf400KBIsRefused() async throws {
        let folder = try await Folder(environment: .sandbox)
        try await ServeProcess.serving(folder.url) { served in
            let port = UInt16(served.url.port!)
            let token = try folder.token()
            let huge = "a" + String(repeating: "\u{0301}", count: 200_000)
            #expect(huge.count == 1 && huge.utf8.count == 400_001)
            func upload(header: String, body: String = "Your plans sync.", bullet: String? = nil) async -> (RawHTTP.Answer, String) {
                let id = UUID().uuidString.lowercased()
                let bullets = bullet.map { #", "bulletPoints": [{"text": \#(Self.quoted($0)), "imageIdentifier": "\#(UUID().uuidString.lowercased())", "altText": "x"}]"# } ?? ""
                return (await Self.uploadMessage(#"{"header": \#(Self.quoted(header)), "body": \#(Self.quoted(body))\#(bullets)}"#, id: id, port: port, token: token), id)
            }
            for (field, (answer, _)) in [("header", await upload(header: huge)), ("body", await upload(header: "Stay", body: huge)),
                                         ("bullet point", await upload(header: "Stay", bullet: huge))] {
                #expect(answer.status == 400, "\(field): \(answer.text.prefix(300))")
                let expected = field == "header" ? 4_000_162 : field == "body" ? 4_000_163 : 4_000_219
                #expect(Self.errorCode(answer) == expected, "\(field): \(answer.text.prefix(300))")
            }
            // 34 emoji: 34 graphemes but 68 UTF-16 units, over 66.
            let emoji = await upload(header: String(repeating: "😀", count: 34)).0
            #expect(emoji.status == 400 && Self.errorCode(emoji) == 4_000_162, "\(emoji.text.prefix(300))")
            #expect(Self.errorCode(await upload(header: String(repeating: "é", count: 67)).0) == 4_000_162)
            // At the limits: accepted, and listed.
            var accepted: [String] = []
            for (header, body) in [(String(repeating: "😀", count: 33), "b"), (String(repeating: "é", count: 66), String(repeating: "x", count: 144))] {
                let (answer, id) = await upload(header: header, body: body)
                #expect(answer.status == 200, "\(header.utf16.count) units: \(answer.text.prefix(300))")
                accepted.append(id)
            }
            let list = try await Exchange.send("GET", served.url.appendingPathComponent("inApps/v1/messaging/message/list"),
                                               headers: [("Authorization", "Bearer \(token)")])
            let listed = ((list.json?["messageIdentifiers"] as? [[String: Any]]) ?? []).compactMap { $0["messageIdentifier"] as? String }
            #expect(Set(listed) == Set(accepted), "\(String(decoding: list.body, as: UTF8.self))")
        }
    }

    /// A full-size PNG (3840 × 400) padded to about `bytes` with a private chunk, as a photograph's
    /// size would be; `seed` makes each image's bytes its own.
    static func largePNG(bytes: Int, seed: UInt64) -> Data {
        func be32(_ value: Int) -> [UInt8] { [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] { be32(data.count) + Array(type.utf8) + data + [0, 0, 0, 0] }
        var random = SplitMix64(state: seed)
        let padding = (0..<bytes).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        return Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", be32(3840) + be32(400) + [8, 2, 0, 0, 0])
                    + chunk("prVt", padding) + chunk("IDAT", [0x78, 0x01]) + chunk("IEND", []))
    }

    /// The resident memory of process `pid` in bytes (`VmRSS` in `/proc/PID/status`).
    static func residentBytes(of pid: pid_t) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") else {
            throw TestFailure("no VmRSS in /proc/\(pid)/status")
        }
        return kilobytes * 1024
    }

    static let imageCount = 100
    static let imageBytes = 300_000

    @Test("item 14: 100 images of 300 KB uploaded over HTTP leave storekit serve's resident memory far below their 30 MB, and each is served back whole")
    func uploadedImagesStayOutOfTheServersMemory() async throws {
        let folder = try await Folder(environment: .xcode)
        let images = try await ServeProcess.serving(folder.url) { served in
            let token = try folder.token()
            let pid = served.process.pid
            func upload(_ index: Int) async throws -> (id: String, png: Data) {
                let id = UUID().uuidString.lowercased(), png = Self.largePNG(bytes: Self.imageBytes, seed: UInt64(index))
                let answer = try await Exchange.send("PUT", served.url.appendingPathComponent("inApps/v1/messaging/image/\(id)"), body: png,
                                                     headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "image/png")])
                #expect(answer.status == 200, "image \(index): \(String(decoding: answer.body, as: UTF8.self))")
                return (id, png)
            }
            func servedBack(_ image: (id: String, png: Data)) async throws -> Bool {
                let answer = try await Exchange.send("GET", served.url.appendingPathComponent("v1/admin/retention/images/\(image.id)"))
                return answer.status == 200 && answer.contentType == "image/png" && answer.body == image.png
            }
            // Warm up: the paths an upload and a read take, their buffers and the ledger's connections.
            for index in 0..<4 {
                let image = try await upload(Self.imageCount + index)
                #expect(try await servedBack(image))
            }
            let before = try Self.residentBytes(of: pid)
            var images: [(id: String, png: Data)] = []
            for index in 0..<Self.imageCount { images.append(try await upload(index)) }
            for image in images { #expect(try await servedBack(image), "image \(image.id) is not served back whole") }
            let after = try Self.residentBytes(of: pid)
            let total = Self.imageCount * Self.imageBytes
            print("storekit serve resident memory: \(before / 1024) KiB before, \(after / 1024) KiB after \(Self.imageCount) images of \(Self.imageBytes / 1000) KB (\(total / 1_000_000) MB)")
            #expect(after - before < total / 3, "resident memory grew by \((after - before) / 1024) KiB for \(total / 1024) KiB of images")
            return images
        }
        // Still there for a server that starts afresh: they are in the ledger.
        try await ServeProcess.serving(folder.url) { again in
            let image = images[images.count / 2]
            let answer = try await Exchange.send("GET", again.url.appendingPathComponent("v1/admin/retention/images/\(image.id)"))
            #expect(answer.status == 200 && answer.body == image.png)
        }
    }
}
