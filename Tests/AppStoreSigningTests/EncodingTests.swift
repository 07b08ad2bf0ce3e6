import AppStoreSigning
import Foundation
import Testing

@Suite(.timeLimit(.minutes(10)))
struct EncodingTests {
    @Test("base64url round-trips every length from 0 to 70 bytes", arguments: 0...70)
    func base64URLRoundTrip(length: Int) {
        let bytes = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 * 37 + 11) })
        let encoded = Base64URL.encode(bytes)
        #expect(!encoded.contains("="))
        #expect(!encoded.contains("+") && !encoded.contains("/"))
        #expect(Base64URL.decode(encoded) == bytes)
        let standard = bytes.base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        #expect(encoded == standard)
    }

    @Test("base64url rejects text outside its alphabet and impossible lengths", arguments: ["a", "ab+c", "ab/c", "a b", "abcde", "é", "AB"])
    func base64URLRejects(text: String) {
        // "AB" decodes to one byte only if the unused bits are zero; they are not ("B" = 000001).
        #expect(Base64URL.decode(text) == nil)
    }

    @Test("base64url accepts padded input")
    func base64URLPadding() {
        #expect(Base64URL.decode("YQ==") == Data("a".utf8))
    }

    @Test("raw and DER ECDSA signatures convert both ways, matching OpenSSL's DER")
    func signatureConversion() throws {
        let key = try P256PrivateKey.generate()
        for index in 0..<32 {
            let message = Data("message \(index)".utf8)
            let der = try key.derSignature(for: message)
            let raw = try #require(ECDSASignature.raw(fromDER: der))
            #expect(raw.count == 64)
            #expect(ECDSASignature.der(fromRaw: raw) == der)
            #expect(key.publicKey.isValidSignature(raw, for: message))
            #expect(!key.publicKey.isValidSignature(raw, for: Data("other".utf8)))
        }
    }

    @Test("a DER signature with trailing bytes or a wrong tag is rejected")
    func malformedDERSignature() throws {
        let der = try P256PrivateKey.generate().derSignature(for: Data("x".utf8))
        #expect(ECDSASignature.raw(fromDER: der + Data([0])) == nil)
        var wrongTag = der
        wrongTag[0] = 0x31
        #expect(ECDSASignature.raw(fromDER: wrongTag) == nil)
        #expect(ECDSASignature.der(fromRaw: Data(count: 63)) == nil)
    }

    @Test("SHA-256 and SHA-384 match the FIPS 180-2 vectors for \"abc\"")
    func digests() {
        let abc = Data("abc".utf8)
        #expect(hex(Digest.sha256(abc)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(hex(Digest.sha384(abc)) == "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7")
    }

    @Test("device verification hashes the lower-cased nonce and identifier with SHA-384")
    func deviceVerification() throws {
        let nonce = try #require(UUID(uuidString: "7EDEA87D-98F0-42D0-9682-49CA81022F73"))
        let device = try #require(UUID(uuidString: "0B7C9A3E-1D2F-4A5B-8C6D-7E8F9A0B1C2D"))
        let expected = Digest.sha384(Data("7edea87d-98f0-42d0-9682-49ca81022f730b7c9a3e-1d2f-4a5b-8c6d-7e8f9a0b1c2d".utf8))
        #expect(DeviceVerification.digest(nonce: nonce, deviceVerificationID: device) == expected)
        #expect(expected.count == 48)
        let value = DeviceVerification.value(nonce: nonce, deviceVerificationID: device)
        #expect(DeviceVerification.matches(value, nonce: nonce, deviceVerificationID: device))
        #expect(!DeviceVerification.matches(value, nonce: nonce, deviceVerificationID: UUID(uuidString: "00000000-0000-0000-0000-000000000001")!))
    }

    @Test("PEM wraps DER at 64 columns and reads it back")
    func pemRoundTrip() throws {
        let key = try P256PrivateKey.generate()
        let pem = try key.pemRepresentation
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        #expect(pem.split(separator: "\n").allSatisfy { $0.count <= 64 })
        let reread = try P256PrivateKey(pemRepresentation: pem)
        #expect(try reread.publicKey.derRepresentation == key.publicKey.derRepresentation)
    }

    @Test("keys that are not P-256 private keys are refused with a reason")
    func badKeys() {
        #expect(throws: SigningError.self) { try P256PrivateKey(pemRepresentation: "not a key") }
        #expect(throws: SigningError.self) { try P256PrivateKey(derRepresentation: Data([0x30, 0x03, 0x02, 0x01, 0x00])) }
        #expect(throws: SigningError.self) { try P256PublicKey(derRepresentation: Data()) }
        #expect(throws: SigningError.self) { try Certificate(derRepresentation: Data("junk".utf8)) }
    }

    private func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }
}
