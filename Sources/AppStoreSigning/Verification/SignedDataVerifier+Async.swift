import AppStoreModels
import BlockingWork

// Online checks ask OCSP responders over the network, which blocks the calling thread. In async code
// these overloads are the ones Swift picks: with online checks on, the verification runs on a thread
// of its own (`BlockingWork`), never on the cooperative pool; offline, it is CPU work and runs where
// the caller is.
extension SignedDataVerifier {
    /// Runs a verification where it may block: off the pool when it may ask OCSP responders.
    private func verifying<Result: Sendable>(_ body: @escaping @Sendable () throws(VerificationError) -> Result) async throws(VerificationError) -> Result {
        guard enableOnlineChecks else { return try body() }
        return try await BlockingWork.run("SignedDataVerifier online checks", body)
    }

    /// ``verifyAndDecodeTransaction(_:)-(String)``, without blocking a thread of the caller's.
    public func verifyAndDecodeTransaction(_ signedTransaction: String) async throws(VerificationError) -> JWSTransactionDecodedPayload {
        try await verifying { () throws(VerificationError) in try self.verifyAndDecodeTransaction(signedTransaction) }
    }

    /// ``verifyAndDecodeRenewalInfo(_:)-(String)``, without blocking a thread of the caller's.
    public func verifyAndDecodeRenewalInfo(_ signedRenewalInfo: String) async throws(VerificationError) -> JWSRenewalInfoDecodedPayload {
        try await verifying { () throws(VerificationError) in try self.verifyAndDecodeRenewalInfo(signedRenewalInfo) }
    }

    /// ``verifyAndDecodeNotification(_:)-(String)``, without blocking a thread of the caller's.
    public func verifyAndDecodeNotification(_ signedPayload: String) async throws(VerificationError) -> ResponseBodyV2DecodedPayload {
        try await verifying { () throws(VerificationError) in try self.verifyAndDecodeNotification(signedPayload) }
    }

    /// ``verifyAndDecodeAppTransaction(_:)-(String)``, without blocking a thread of the caller's.
    public func verifyAndDecodeAppTransaction(_ signedAppTransaction: String) async throws(VerificationError) -> AppTransaction {
        try await verifying { () throws(VerificationError) in try self.verifyAndDecodeAppTransaction(signedAppTransaction) }
    }

    /// ``verifyAndDecodeRealtimeRequest(_:)-(String)``, without blocking a thread of the caller's.
    public func verifyAndDecodeRealtimeRequest(_ signedPayload: String) async throws(VerificationError) -> DecodedRealtimeRequestBody {
        try await verifying { () throws(VerificationError) in try self.verifyAndDecodeRealtimeRequest(signedPayload) }
    }

    /// ``verifyAndDecodeEmbeddedData(of:)``, without blocking a thread of the caller's.
    public func verifyAndDecodeEmbeddedData(of notification: ResponseBodyV2DecodedPayload) async throws(VerificationError)
        -> (transaction: JWSTransactionDecodedPayload?, renewalInfo: JWSRenewalInfoDecodedPayload?) {
        try await verifying { () throws(VerificationError) in
            let embedded = try self.verifyAndDecodeEmbeddedData(of: notification)
            return Embedded(transaction: embedded.transaction, renewalInfo: embedded.renewalInfo)
        }.pair
    }

    /// ``verifyAndDecodeSignedData(_:as:)``, without blocking a thread of the caller's.
    public func verifyAndDecodeSignedData<Payload: SignedPayload & Sendable>(_ jws: String, as type: Payload.Type) async throws(VerificationError) -> Payload {
        try await verifying { () throws(VerificationError) in try self.verifyAndDecodeSignedData(jws, as: type) }
    }
}

/// A notification's embedded data, carried across the hop off the pool.
private struct Embedded: Sendable {
    var transaction: JWSTransactionDecodedPayload?
    var renewalInfo: JWSRenewalInfoDecodedPayload?
    var pair: (transaction: JWSTransactionDecodedPayload?, renewalInfo: JWSRenewalInfoDecodedPayload?) { (transaction, renewalInfo) }
}
