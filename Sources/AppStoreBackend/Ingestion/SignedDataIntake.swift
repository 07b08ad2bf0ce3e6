import AppStoreModels
import AppStoreSigning
import Foundation

/// Turns what Apple (or a local App Store) signed into changes for the backend's ledger, after
/// verifying it as Apple's libraries do: chain to the trusted root, signature, bundle identifier,
/// environment and app Apple ID. Nothing that fails verification produces a change.
public struct SignedDataIntake: Sendable {
    public let verifier: SignedDataVerifier

    public init(verifier: SignedDataVerifier) {
        self.verifier = verifier
    }

    /// A Get Retention Message request's body (`{"signedPayload": …}`), verified as Apple's libraries
    /// verify it.
    public func realtimeRequest(body: Data) throws(BackendError) -> DecodedRealtimeRequestBody {
        guard let decoded = try? JSONDecoder().decode(RealtimeRequestBody.self, from: body), let signed = decoded.signedPayload else {
            throw .badRequest("the body is not {\"signedPayload\": \"…\"}")
        }
        do { return try verifier.verifyAndDecodeRealtimeRequest(signed) } catch {
            throw .unverified("the real-time request did not verify: \(error)")
        }
    }

    /// A notification's body (`{"signedPayload": …}`): the notification with its transaction and status.
    public func notification(body: Data) throws(BackendError) -> BackendChange {
        struct Body: Decodable { var signedPayload: String }
        guard let decoded = try? JSONDecoder().decode(Body.self, from: body) else {
            throw .badRequest("the body is not {\"signedPayload\": \"…\"}")
        }
        let payload: ResponseBodyV2DecodedPayload
        let embedded: (transaction: JWSTransactionDecodedPayload?, renewalInfo: JWSRenewalInfoDecodedPayload?)
        do {
            payload = try verifier.verifyAndDecodeNotification(decoded.signedPayload)
            embedded = try verifier.verifyAndDecodeEmbeddedData(of: payload)
        } catch {
            throw .unverified("the notification did not verify: \(error)")
        }
        guard let uuid = payload.notificationUUID, let type = payload.notificationType, let signedDate = payload.signedDate else {
            throw .badRequest("the notification lacks its UUID, type or signed date")
        }
        var change = BackendChange(notification: BackendNotification(
            notificationUUID: uuid, type: type.rawValue, subtype: payload.subtype?.rawValue, signedDate: signedDate,
            transactionID: embedded.transaction?.transactionId, originalTransactionID: embedded.transaction?.originalTransactionId,
            gracePeriodExpiresDate: embedded.renewalInfo?.gracePeriodExpiresDate, transactionExpiresDate: embedded.transaction?.expiresDate,
            transactionRevocationDate: embedded.transaction?.revocationDate))
        if let transaction = embedded.transaction, let jws = payload.data?.signedTransactionInfo {
            change.transaction = BackendTransaction(payload: transaction, signedTransaction: jws, customerID: Self.customer(of: transaction))
        }
        if let original = embedded.transaction?.originalTransactionId ?? embedded.renewalInfo?.originalTransactionId,
           payload.data?.status != nil || embedded.renewalInfo != nil {
            change.status = BackendSubscriptionStatus(originalTransactionID: original, status: payload.data?.status, renewalInfo: embedded.renewalInfo,
                                                      signedDate: signedDate)
        }
        return change
    }

    /// A transaction an app sends after a purchase (its `jwsRepresentation`), with the app's own user
    /// id when it has one.
    public func transaction(signedTransaction jws: String, userID: String?) throws(BackendError) -> BackendChange {
        let payload: JWSTransactionDecodedPayload
        do { payload = try verifier.verifyAndDecodeTransaction(jws) } catch {
            throw .unverified("the transaction did not verify: \(error)")
        }
        guard payload.transactionId != nil else { throw .badRequest("the transaction has no transactionId") }
        if let userID, userID.isEmpty || userID.count > 200 { throw .badRequest("userID must be 1 to 200 characters") }
        var change = BackendChange(transaction: BackendTransaction(payload: payload, signedTransaction: jws,
                                                                   customerID: Self.customer(of: payload) ?? userID))
        // The purchase's own app account token names its customer; an app's user id links only a
        // purchase without one (and only the first user id: another is a conflict, see the storage).
        if Self.customer(of: payload) == nil, let userID, let original = payload.originalTransactionId ?? payload.transactionId {
            change.link = CustomerLink(originalTransactionID: original, customerID: userID)
        }
        return change
    }

    /// A subscription's status as the App Store Server API answers it (an item of Get All Subscription
    /// Statuses' `lastTransactions`): its latest transaction and renewal info, verified, told as of
    /// their signing (so a notification signed later still wins).
    public func subscriptionStatus(_ item: LastTransactionsItem) throws(BackendError) -> BackendChange {
        guard let jws = item.signedTransactionInfo else { throw .badRequest("the status of \(item.originalTransactionId ?? "?") has no signed transaction") }
        let transaction: JWSTransactionDecodedPayload
        var renewalInfo: JWSRenewalInfoDecodedPayload?
        do {
            transaction = try verifier.verifyAndDecodeTransaction(jws)
            renewalInfo = try item.signedRenewalInfo.map { (text) throws(VerificationError) in try verifier.verifyAndDecodeRenewalInfo(text) }
        } catch {
            throw .unverified("the subscription status did not verify: \(error)")
        }
        guard let original = transaction.originalTransactionId, let signed = transaction.signedDate else {
            throw .badRequest("the status's transaction lacks its original transaction identifier or signed date")
        }
        var change = BackendChange(transaction: BackendTransaction(payload: transaction, signedTransaction: jws, customerID: Self.customer(of: transaction)))
        change.status = BackendSubscriptionStatus(originalTransactionID: original, status: item.status.map(Status.init(rawValue:)), renewalInfo: renewalInfo,
                                                  signedDate: max(signed, renewalInfo?.signedDate ?? signed))
        return change
    }

    /// The customer a transaction names: its app account token, in lower case.
    static func customer(of transaction: JWSTransactionDecodedPayload) -> String? {
        transaction.appAccountToken.map { $0.uuidString.lowercased() }
    }
}
