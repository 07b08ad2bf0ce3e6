import AppStoreModels
import AppStoreSigning
import Foundation

extension StoreClient {
    /// Verifies a signed transaction on this device.
    ///
    /// - Returns: `nil` when the JWS cannot even be decoded into a transaction (nothing to show).
    func verifyTransaction(_ item: SignedItem) -> VerificationResult<Transaction>? {
        verify(item, as: JWSTransactionDecodedPayload.self, check: { verifier, jws throws(VerificationError) in
            try verifier.verifyAndDecodeTransaction(jws)
        }, make: { payload, jws, data in
            Transaction(payload: payload, jws: jws, payloadData: data, client: self)
        })
    }

    /// Verifies signed renewal info on this device.
    func verifyRenewalInfo(_ item: SignedItem) -> VerificationResult<Product.SubscriptionInfo.RenewalInfo>? {
        verify(item, as: JWSRenewalInfoDecodedPayload.self, check: { verifier, jws throws(VerificationError) in
            try verifier.verifyAndDecodeRenewalInfo(jws)
        }, make: { payload, jws, data in
            Product.SubscriptionInfo.RenewalInfo(payload: payload, jws: jws, payloadData: data)
        })
    }

    /// Verifies a signed app transaction on this device.
    func verifyAppTransaction(_ item: SignedItem) -> VerificationResult<AppTransaction>? {
        verify(item, as: AppStoreModels.AppTransaction.self, check: { verifier, jws throws(VerificationError) in
            try verifier.verifyAndDecodeAppTransaction(jws)
        }, make: { payload, jws, data in
            AppTransaction(payload: payload, jws: jws, payloadData: data)
        })
    }

    /// The checks StoreKit makes on the device, in order: the JWS decodes, the chain and signature
    /// hold for this app and environment, the payload has what every value of its kind has, and the
    /// device verification digest matches this device. A failure the store's test session
    /// simulates replaces the outcome.
    private func verify<Payload: SignedPayload, Value: RequiredPropertiesChecking>(
        _ item: SignedItem, as type: Payload.Type,
        check: (SignedDataVerifier, String) throws(VerificationError) -> Payload,
        make: (Payload, String, Data) -> Value
    ) -> VerificationResult<Value>? {
        let compact: CompactJWS
        let payload: Payload
        do {
            compact = try CompactJWS(item.jws)
            payload = try compact.payload(as: type)
        } catch {
            StoreDiagnostics.report("dropped signed data that does not decode: \(error)")
            return nil
        }
        let value = make(payload, item.jws, compact.payloadData)
        if let name = item.simulatedVerificationFailure,
           let simulated = VerificationResult<Value>.VerificationError(caseName: name) {
            return .unverified(value, simulated)
        }
        guard let verifier else { return .unverified(value, .invalidCertificateChain) }
        do {
            _ = try check(verifier, item.jws)
        } catch {
            return .unverified(value, Self.verificationError(for: error))
        }
        guard value.hasRequiredProperties else { return .unverified(value, .missingRequiredProperties) }
        guard value.deviceVerification == DeviceVerification.digest(nonce: value.deviceVerificationNonce,
                                                                    deviceVerificationID: verificationContext.deviceVerificationID) else {
            return .unverified(value, .invalidDeviceVerification)
        }
        return .verified(value)
    }

    /// StoreKit's verification error for a failure of the App Store library's checks.
    static func verificationError<T>(for error: VerificationError) -> VerificationResult<T>.VerificationError {
        switch error.check {
        case .format: return .invalidEncoding
        case .certificateChain: return .invalidCertificateChain
        case .revocation: return error.code == .retryableVerificationFailure ? .invalidCertificateChain : .revokedCertificate
        case .signature, .appIdentity: return .invalidSignature
        }
    }
}

/// A signed value that can tell whether its payload has the properties every value of its kind has.
protocol RequiredPropertiesChecking: JWSSignedValue {
    var hasRequiredProperties: Bool { get }
}

/// Where the client reports what it drops, so nothing disappears silently.
package enum StoreDiagnostics {
    package static func report(_ message: String) {
        FileHandle.standardError.write(Data("OpenStoreKit: \(message)\n".utf8))
    }
}
