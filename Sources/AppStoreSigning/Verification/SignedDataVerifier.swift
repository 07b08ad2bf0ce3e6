import AppStoreModels
import Foundation
import ServiceLogging

/// Verifies and decodes App Store signed data the way Apple's App Store Server Library does.
///
/// Each `verifyAndDecode…` call:
/// 1. splits the compact JWS and decodes the payload (a malformed one is `INVALID_JWT_FORMAT`);
/// 2. checks the header: `alg` must be `ES256` and `x5c` must hold exactly three certificates, of
///    which the third is ignored: trust comes only from the configured roots;
/// 3. validates leaf and intermediate to a configured root at the payload's `signedDate`
///    (`receiptCreationDate` for app transactions), or at the current time with OCSP checks when
///    online checks are on, and requires Apple's marker extensions on leaf and intermediate;
/// 4. checks the ES256 signature with the leaf's key;
/// 5. checks the app identifier, then the environment, as Apple orders them.
///
/// As in Apple's libraries, a verifier for the `Xcode` or `LocalTesting` environment skips steps 2–4
/// unless ``Options/verifiesLocalEnvironments`` is set. Validated chains are cached (see
/// ``Options/chainCacheCapacity``), so verifying many payloads from one signer costs about one
/// ECDSA verification each.
public struct SignedDataVerifier: Sendable {
    /// Settings beyond Apple's constructor arguments.
    public struct Options: Sendable {
        /// How many validated chains to keep; zero turns caching off.
        public var chainCacheCapacity: Int = 64
        /// Check signatures and chains even for `Xcode` and `LocalTesting` (Apple's libraries do not).
        public var verifiesLocalEnvironments: Bool = false
        /// Send OCSP requests here instead of to the responders the certificates name.
        public var ocspResponderOverride: String?
        /// Seconds to wait for an OCSP responder.
        public var ocspTimeoutSeconds: Int32 = 30
        /// The current time, for online checks and payloads without a signing date.
        public var currentDate: @Sendable () -> Date = { Date() }

        public init() {}
    }

    /// A verifier that cannot work as configured.
    public struct ConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
        public var description: String
    }

    public let bundleId: String
    public let appAppleId: Int64?
    public let environment: Environment
    public let enableOnlineChecks: Bool
    public let options: Options
    let rootCertificates: [Certificate]
    let validator: X509ChainValidator
    let cache: VerifiedChainCache

    /// Makes a verifier.
    ///
    /// - Parameters:
    ///   - rootCertificates: The only certificates trusted as chain roots (Apple Root CA G3 for real data).
    ///   - bundleId: The bundle identifier payloads must carry.
    ///   - appAppleId: The app's Apple ID; required for Production.
    ///   - environment: The environment payloads must come from.
    ///   - enableOnlineChecks: Validate chains at the current time and ask OCSP responders about revocation.
    public init(rootCertificates: [Certificate], bundleId: String, appAppleId: Int64? = nil,
                environment: Environment, enableOnlineChecks: Bool = false,
                options: Options = Options()) throws(ConfigurationError) {
        if environment == .production, appAppleId == nil {
            throw ConfigurationError(description: "appAppleId is required when the environment is Production")
        }
        self.rootCertificates = rootCertificates
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environment = environment
        self.enableOnlineChecks = enableOnlineChecks
        self.options = options
        do {
            self.validator = try X509ChainValidator(roots: rootCertificates.map(\.handle))
        } catch {
            throw ConfigurationError(description: error.description)
        }
        self.cache = VerifiedChainCache(capacity: options.chainCacheCapacity)
    }

    // MARK: Payload kinds

    /// Verifies a signed transaction; checks bundle identifier, then environment.
    public func verifyAndDecodeTransaction(_ signedTransaction: String) throws(VerificationError) -> JWSTransactionDecodedPayload {
        let transaction = try verifyAndDecodeSignedData(signedTransaction, as: JWSTransactionDecodedPayload.self)
        try checkBundleId(transaction.bundleId)
        try checkEnvironment(transaction.environment)
        return transaction
    }

    /// Verifies signed renewal info; checks the environment (renewal info has no bundle identifier).
    public func verifyAndDecodeRenewalInfo(_ signedRenewalInfo: String) throws(VerificationError) -> JWSRenewalInfoDecodedPayload {
        let renewalInfo = try verifyAndDecodeSignedData(signedRenewalInfo, as: JWSRenewalInfoDecodedPayload.self)
        try checkEnvironment(renewalInfo.environment)
        return renewalInfo
    }

    /// Verifies a signed App Store Server Notification V2.
    ///
    /// The app and environment come from the first of `data`, `summary`, `externalPurchaseToken` and
    /// `appData` that is present. An external purchase token's environment is Sandbox when its
    /// identifier starts with `SANDBOX`, else Production. The app Apple ID is only compared in
    /// Production. Embedded signed data is not verified here; see ``verifyAndDecodeEmbeddedData(of:)``.
    public func verifyAndDecodeNotification(_ signedPayload: String) throws(VerificationError) -> ResponseBodyV2DecodedPayload {
        let notification = try verifyAndDecodeSignedData(signedPayload, as: ResponseBodyV2DecodedPayload.self)
        let (bundleId, appAppleId, environment): (String?, Int64?, Environment?)
        if let data = notification.data {
            (bundleId, appAppleId, environment) = (data.bundleId, data.appAppleId, data.environment)
        } else if let summary = notification.summary {
            (bundleId, appAppleId, environment) = (summary.bundleId, summary.appAppleId, summary.environment)
        } else if let token = notification.externalPurchaseToken {
            let sandbox = token.externalPurchaseId?.hasPrefix("SANDBOX") ?? false
            (bundleId, appAppleId, environment) = (token.bundleId, token.appAppleId, sandbox ? .sandbox : .production)
        } else if let appData = notification.appData {
            (bundleId, appAppleId, environment) = (appData.bundleId, appData.appAppleId, appData.environment)
        } else {
            (bundleId, appAppleId, environment) = (nil, nil, nil)
        }
        try checkBundleId(bundleId)
        if self.environment == .production, appAppleId != self.appAppleId {
            throw VerificationError(.invalidAppIdentifier, "the notification is for app \(describe(appAppleId)), not \(describe(self.appAppleId))")
        }
        try checkEnvironment(environment)
        return notification
    }

    /// Verifies a signed app transaction; checks bundle identifier, the app Apple ID in Production,
    /// then that `receiptType` is the configured environment.
    public func verifyAndDecodeAppTransaction(_ signedAppTransaction: String) throws(VerificationError) -> AppTransaction {
        let appTransaction = try verifyAndDecodeSignedData(signedAppTransaction, as: AppTransaction.self)
        try checkBundleId(appTransaction.bundleId)
        if environment == .production, appTransaction.appAppleId != appAppleId {
            throw VerificationError(.invalidAppIdentifier, "the app transaction is for app \(describe(appTransaction.appAppleId)), not \(describe(appAppleId))")
        }
        try checkEnvironment(appTransaction.receiptType)
        return appTransaction
    }

    /// Verifies the `signedPayload` of a request to the developer's Get Retention Message endpoint
    /// (Retention Messaging API), as Apple's libraries' `verifyAndDecodeRealtimeRequest` does: the
    /// chain and signature, the environment, and in Production the app's Apple ID.
    public func verifyAndDecodeRealtimeRequest(_ signedPayload: String) throws(VerificationError) -> DecodedRealtimeRequestBody {
        let request = try verifyAndDecodeSignedData(signedPayload, as: DecodedRealtimeRequestBody.self)
        if environment == .production, request.appAppleId != appAppleId {
            throw VerificationError(.invalidAppIdentifier, "the request is for app \(request.appAppleId), not \(describe(appAppleId))")
        }
        try checkEnvironment(request.environment)
        return request
    }

    /// Verifies the signed transaction and renewal info a notification carries in `data`.
    public func verifyAndDecodeEmbeddedData(of notification: ResponseBodyV2DecodedPayload) throws(VerificationError)
        -> (transaction: JWSTransactionDecodedPayload?, renewalInfo: JWSRenewalInfoDecodedPayload?) {
        let transaction = try notification.data?.signedTransactionInfo.map { (jws) throws(VerificationError) in
            try verifyAndDecodeTransaction(jws)
        }
        let renewalInfo = try notification.data?.signedRenewalInfo.map { (jws) throws(VerificationError) in
            try verifyAndDecodeRenewalInfo(jws)
        }
        return (transaction, renewalInfo)
    }

    // MARK: The JWS itself

    /// Verifies the format, chain and signature of any signed payload, without the app and environment checks.
    public func verifyAndDecodeSignedData<Payload: SignedPayload>(_ jws: String, as type: Payload.Type) throws(VerificationError) -> Payload {
        let compact: CompactJWS
        let payload: Payload
        do {
            compact = try CompactJWS(jws, decodingHeader: false)
            payload = try compact.payload(as: type)
        } catch {
            throw VerificationError(.invalidJWTFormat, error.description)
        }
        if (environment == .xcode || environment == .localTesting), !options.verifiesLocalEnvironments {
            return payload
        }
        let now = options.currentDate()
        let validationTime = enableOnlineChecks ? now : (payload.validationDate ?? now)
        let onlineAt = enableOnlineChecks ? now : nil
        // A header seen before was already checked and its chain validated; the cache is keyed by the
        // header segment, which holds the x5c certificates byte for byte.
        let chainKey = String(compact.encodedHeader)
        let signingKey: P256PublicKey
        if let cached = cache.signingKey(for: chainKey, validAt: validationTime, onlineAt: onlineAt) {
            signingKey = cached
        } else {
            let header: JWSHeader
            do { header = try compact.header() } catch { throw VerificationError(.invalidJWTFormat, error.description) }
            guard header.alg == "ES256" else {
                throw VerificationError(.invalidJWTFormat, "the algorithm is \(header.alg.map { "\"\(UntrustedText.excerpt($0))\"" } ?? "missing"), not ES256")
            }
            guard let x5c = header.x5c else { throw VerificationError(.invalidJWTFormat, "the header has no x5c certificate chain") }
            guard x5c.count == 3 else {
                throw VerificationError(.invalidChainLength, "x5c holds \(x5c.count) certificate\(x5c.count == 1 ? "" : "s"), not 3")
            }
            signingKey = try verifiedSigningKey(leaf: x5c[0], intermediate: x5c[1], at: validationTime, onlineAt: onlineAt, cacheKey: chainKey)
        }
        guard signingKey.isValidSignature(compact.signature, for: compact.signingInput) else {
            throw VerificationError(.verificationFailure, "the signature does not verify with the leaf certificate's key", check: .signature)
        }
        return payload
    }

    // MARK: Chain

    func verifiedSigningKey(leaf: String, intermediate: String, at validationTime: Date, onlineAt now: Date?,
                            cacheKey chainKey: String) throws(VerificationError) -> P256PublicKey {
        guard !rootCertificates.isEmpty else { throw VerificationError(.invalidCertificate, "no trusted root certificates are configured") }

        let leafCertificate = try parseCertificate(leaf, position: "x5c[0]")
        let intermediateCertificate = try parseCertificate(intermediate, position: "x5c[1]")
        let chain: [X509Handle]
        switch validator.validate(leaf: leafCertificate, intermediates: [intermediateCertificate], at: validationTime) {
        case .valid(let verified): chain = verified
        case .invalid(let reason): throw VerificationError(.verificationFailure, "certificate chain: \(reason)")
        }
        guard chain.count == 3 else {
            throw VerificationError(.verificationFailure, "the verified chain has \(chain.count) certificates, not 3")
        }
        guard chain[0].hasExtension(oid: AppleCertificateMarkers.receiptSigningLeafOID) else {
            throw VerificationError(.verificationFailure, "the leaf certificate lacks extension \(AppleCertificateMarkers.receiptSigningLeafOID)")
        }
        guard chain[1].hasExtension(oid: AppleCertificateMarkers.worldwideDeveloperRelationsIntermediateOID) else {
            throw VerificationError(.verificationFailure, "the intermediate certificate lacks extension \(AppleCertificateMarkers.worldwideDeveloperRelationsIntermediateOID)")
        }
        guard let key = chain[0].publicKey(), key.isP256 else {
            throw VerificationError(.verificationFailure, "the leaf certificate's key is not P-256")
        }
        if now != nil {
            try checkRevocation(of: chain[1], issuedBy: chain[2], name: "intermediate")
            try checkRevocation(of: chain[0], issuedBy: chain[1], name: "leaf")
        }
        let validFrom = chain.compactMap(\.notBefore).max() ?? .distantPast
        let validUntil = chain.compactMap(\.notAfter).min() ?? .distantFuture
        let publicKey = P256PublicKey(key: key)
        cache.insert(.init(signingKey: publicKey, validFrom: validFrom, validUntil: validUntil, revocationCheckedAt: now), for: chainKey)
        return publicKey
    }

    private func parseCertificate(_ base64: String, position: String) throws(VerificationError) -> X509Handle {
        guard let der = Data(base64Encoded: base64) else {
            throw VerificationError(.invalidCertificate, "\(position) is not base64")
        }
        guard let certificate = X509Handle.parse(der: der) else {
            throw VerificationError(.invalidCertificate, "\(position) is not a DER X.509 certificate")
        }
        return certificate
    }

    private func checkRevocation(of certificate: X509Handle, issuedBy issuer: X509Handle, name: String) throws(VerificationError) {
        switch validator.revocationStatus(of: certificate, issuedBy: issuer, responderOverride: options.ocspResponderOverride,
                                          timeoutSeconds: options.ocspTimeoutSeconds) {
        case .good: return
        case .rejected(let reason): throw VerificationError(.verificationFailure, "OCSP for the \(name) certificate: \(reason)", check: .revocation)
        case .unavailable(let reason): throw VerificationError(.retryableVerificationFailure, "OCSP for the \(name) certificate: \(reason)")
        }
    }

    // MARK: Post-checks

    private func checkBundleId(_ actual: String?) throws(VerificationError) {
        guard actual == bundleId else {
            throw VerificationError(.invalidAppIdentifier, "the bundle identifier is \(describe(actual)), not \"\(bundleId)\"")
        }
    }

    private func checkEnvironment(_ actual: Environment?) throws(VerificationError) {
        guard actual == environment else {
            throw VerificationError(.invalidEnvironment, "the environment is \(describe(actual?.rawValue)), not \(environment.rawValue)")
        }
    }

    private func describe(_ value: String?) -> String { value.map { "\"\($0)\"" } ?? "missing" }
    private func describe(_ value: Int64?) -> String { value.map(String.init) ?? "missing" }
}
