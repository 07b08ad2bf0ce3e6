import AppStoreSigning
import Foundation

/// An In-App Purchase key the store's App Store Server API accepts (`storekit api-key create`).
///
/// The store keeps the public half only; the private key is handed to the developer once.
public struct APIKeyRecord: Codable, Hashable, Sendable {
    public var keyId: String
    public var issuerId: String
    /// The public key, PEM.
    public var publicKey: String
    public var createdDate: Date
    public var revokedDate: Date?

    public init(keyId: String, issuerId: String, publicKey: String, createdDate: Date, revokedDate: Date? = nil) {
        self.keyId = keyId
        self.issuerId = issuerId
        self.publicKey = publicKey
        self.createdDate = createdDate
        self.revokedDate = revokedDate
    }
}

extension SimulatedAppStore {
    enum APIKeyMeta {
        static let keys = "apiKeys"
        static let issuer = "apiIssuerId"
    }

    /// The store's API keys, revoked ones included.
    public func apiKeys() throws(AppStoreError) -> [APIKeyRecord] {
        try reading { () throws(AppStoreError) in try storedAPIKeys() }
    }

    private func storedAPIKeys() throws(AppStoreError) -> [APIKeyRecord] {
        guard let text = ledger.meta(APIKeyMeta.keys) else { return [] }
        return try Self.decode([APIKeyRecord].self, text)
    }

    /// Registers a new key's public half under a fresh key ID and the store's issuer ID.
    public func registerAPIKey(publicKeyPEM: String) throws(AppStoreError) -> APIKeyRecord {
        try writing { (change) throws(AppStoreError) -> APIKeyRecord in
            var keys = try storedAPIKeys()
            let issuer = ledger.meta(APIKeyMeta.issuer) ?? identifiers().uuidString.lowercased()
            let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
            var keyId = ""
            repeat {
                let bytes = withUnsafeBytes(of: identifiers().uuid) { Array($0) }
                keyId = String(bytes.prefix(10).map { alphabet[Int($0) % alphabet.count] })
            } while keys.contains { $0.keyId == keyId }
            let record = APIKeyRecord(keyId: keyId, issuerId: issuer, publicKey: publicKeyPEM, createdDate: clock.now())
            keys.append(record)
            change.ledger.meta[APIKeyMeta.keys] = try Self.encode(keys)
            change.ledger.meta[APIKeyMeta.issuer] = issuer
            return record
        }
    }

    /// Revokes a key: requests signed with it are refused from now on.
    public func revokeAPIKey(_ keyId: String) throws(AppStoreError) {
        try writing { (change) throws(AppStoreError) in
            var keys = try storedAPIKeys()
            guard let index = keys.firstIndex(where: { $0.keyId == keyId }) else { throw .control(.invalidAction, "no API key \(keyId)") }
            guard keys[index].revokedDate == nil else { return }
            keys[index].revokedDate = clock.now()
            change.ledger.meta[APIKeyMeta.keys] = try Self.encode(keys)
        }
    }
}

extension SimulatedAppStore {
    static let revokedCertificatesKey = "revokedCertificates"

    /// The certificates of the store's authority its OCSP responder reports revoked.
    public func revokedCertificates() throws(AppStoreError) -> Set<CertificateAuthority.Member> {
        try reading { () throws(AppStoreError) in try storedRevokedCertificates() }
    }

    private func storedRevokedCertificates() throws(AppStoreError) -> Set<CertificateAuthority.Member> {
        guard let text = ledger.meta(Self.revokedCertificatesKey) else { return [] }
        return Set(try Self.decode([String].self, text).compactMap(CertificateAuthority.Member.init(rawValue:)))
    }

    /// Revokes a certificate of the store's authority (`storekit ca revoke`): verifiers with online
    /// checks then refuse everything the store signs.
    public func revokeCertificate(_ member: CertificateAuthority.Member) throws(AppStoreError) {
        try writing { (change) throws(AppStoreError) in
            let revoked = try storedRevokedCertificates().union([member])
            change.ledger.meta[Self.revokedCertificatesKey] = try Self.encode(revoked.map(\.rawValue).sorted())
        }
    }
}
