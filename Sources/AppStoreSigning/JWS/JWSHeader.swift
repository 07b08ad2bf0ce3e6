/// The protected header of a JWS.
///
/// App Store signed data has `alg` `ES256` and `x5c` with the leaf, intermediate and root
/// certificates (standard base64 DER). Xcode adds `typ` and `kid`; offer signatures have `kid` and no
/// `x5c`.
public struct JWSHeader: Codable, Hashable, Sendable {
    /// The signature algorithm, `ES256` for everything the App Store signs.
    public var alg: String?
    /// The media type, `JWT` where present.
    public var typ: String?
    /// The identifier of the signing key.
    public var kid: String?
    /// The certificate chain, leaf first, each standard base64 DER.
    public var x5c: [String]?

    public init(alg: String? = "ES256", typ: String? = nil, kid: String? = nil, x5c: [String]? = nil) {
        self.alg = alg
        self.typ = typ
        self.kid = kid
        self.x5c = x5c
    }
}
