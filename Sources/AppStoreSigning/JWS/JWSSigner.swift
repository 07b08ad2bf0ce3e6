import AppStoreModels
import Foundation

/// Signs payloads as ES256 compact JWS with a certificate chain in `x5c`, as the App Store does.
public struct JWSSigner: Sendable {
    /// The signing key; its public half is in the first certificate.
    public let key: P256PrivateKey
    /// The `x5c` chain, leaf first.
    public let certificateChain: [Certificate]
    private let encodedHeader: String

    /// Makes a signer whose header is `{"alg":"ES256","x5c":[…]}` plus `typ`/`kid` when given.
    public init(key: P256PrivateKey, certificateChain: [Certificate], typ: String? = nil, kid: String? = nil) throws(SigningError) {
        self.key = key
        self.certificateChain = certificateChain
        let header = JWSHeader(alg: "ES256", typ: typ, kid: kid,
                               x5c: certificateChain.isEmpty ? nil : certificateChain.map { $0.derRepresentation.base64EncodedString() })
        do {
            encodedHeader = Base64URL.encode(try AppStoreJSON.encode(header))
        } catch {
            throw SigningError("cannot encode the JWS header: \(error)")
        }
    }

    /// Signs raw payload bytes.
    public func sign(payload: Data) throws(SigningError) -> String {
        var signingInput = encodedHeader
        signingInput.reserveCapacity(encodedHeader.utf8.count + payload.count * 4 / 3 + 100)
        signingInput += "."
        signingInput += Base64URL.encode(payload)
        let signature = try key.signature(for: Data(signingInput.utf8))
        signingInput += "."
        signingInput += Base64URL.encode(signature)
        return signingInput
    }

    /// Encodes `payload` with the App Store JSON conventions and signs it.
    public func sign<Payload: Encodable>(_ payload: Payload) throws(SigningError) -> String {
        let data: Data
        do { data = try AppStoreJSON.encode(payload) } catch {
            throw SigningError("cannot encode the payload: \(error)")
        }
        return try sign(payload: data)
    }
}
