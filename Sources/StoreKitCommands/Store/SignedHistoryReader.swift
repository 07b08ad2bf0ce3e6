import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import Foundation

/// Reads signed App Store data from files into a ``SignedHistory``, verifying every item, or none
/// when told so.
///
/// A file is either JWS lines (transactions, renewal infos, notifications, app transactions, one per
/// line, in any order) or one JSON answer of the App Store Server API: a Get Transaction History
/// page, Get All Subscription Statuses, a Get Notification History page, or a notification as it is
/// posted (`{"signedPayload": …}`). Every item that fails is reported with its file and place, and
/// then the whole read fails: an import takes all of its data or none.
struct SignedHistoryReader {
    /// How items are checked.
    enum Trust {
        /// Verified as Apple's libraries do (chain to one of these roots at the item's signed date,
        /// signature, bundle ID, environment); local environments are verified too.
        case roots([Certificate])
        /// Decoded only.
        case unverified
    }

    /// One signed item as read, before it is checked.
    private struct RawItem {
        enum Kind { case transaction, renewalInfo, notification, appTransaction }
        var jws: String
        var kind: Kind?
        var source: String
        var sendAttempts: [NotificationDelivery.Attempt] = []
        /// For an item of a subscription status answer: the status it reported, and its original transaction.
        var status: (Status, String)?
    }

    let trust: Trust
    /// The app the data must be for; `nil` takes it from the data.
    let bundleId: String?

    /// What the data says of the app, once read.
    private(set) var identity: (bundleId: String, environment: Environment, appAppleId: Int64?)?

    init(trust: Trust, bundleId: String?) {
        self.trust = trust
        self.bundleId = bundleId
    }

    mutating func read(_ paths: [String]) throws -> SignedHistory {
        var items: [RawItem] = []
        var failures: [String] = []
        for path in paths {
            do { items += try Self.items(inFile: path) } catch let failure as CommandFailure { failures.append(failure.message) }
        }
        guard failures.isEmpty else { throw CommandFailure(failures.joined(separator: "\n")) }
        guard !items.isEmpty else { throw CommandFailure("no signed data in \(paths.joined(separator: ", "))") }
        let identity = try Self.identity(of: items, bundleId: bundleId)
        self.identity = identity
        let verifier: SignedDataVerifier?
        switch trust {
        case .unverified:
            verifier = nil
        case .roots(let roots):
            var options = SignedDataVerifier.Options()
            options.verifiesLocalEnvironments = true
            do {
                verifier = try SignedDataVerifier(rootCertificates: roots, bundleId: identity.bundleId, appAppleId: identity.appAppleId,
                                                  environment: identity.environment, enableOnlineChecks: false, options: options)
            } catch {
                throw CommandFailure("cannot verify \(identity.environment.rawValue) data for \(identity.bundleId): \(error)")
            }
        }
        var history = SignedHistory()
        for item in items {
            do throws(VerificationError) {
                try Self.add(item, to: &history, verifier: verifier)
            } catch {
                failures.append("\(item.source): refused: \(error.description)")
            }
        }
        guard failures.isEmpty else {
            throw CommandFailure("\(failures.count) of \(items.count) items refused; nothing was imported:\n" + failures.joined(separator: "\n"))
        }
        return history
    }

    // MARK: Files

    private static func items(inFile path: String) throws -> [RawItem] {
        let name = (path as NSString).lastPathComponent
        guard let data = FileManager.default.contents(atPath: path) else { throw CommandFailure("\(path): cannot read the file") }
        let text = String(decoding: data, as: UTF8.self)
        if text.drop(while: \.isWhitespace).first == "{" {
            guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw CommandFailure("\(name): not valid JSON")
            }
            return try items(inAnswer: object, file: name)
        }
        var items: [RawItem] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let jws = line.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !jws.isEmpty, !jws.hasPrefix("#") else { continue }
            items.append(RawItem(jws: jws, kind: nil, source: "\(name):\(index + 1)"))
        }
        return items
    }

    /// The items of an App Store Server API answer saved as JSON.
    private static func items(inAnswer object: [String: Any], file: String) throws -> [RawItem] {
        func strings(_ value: Any?, _ key: String) throws -> [String] {
            guard let array = value as? [Any] else { throw CommandFailure("\(file): \(key) is not an array") }
            return try array.enumerated().map { index, element in
                guard let text = element as? String else { throw CommandFailure("\(file): \(key)[\(index)] is not a string") }
                return text
            }
        }
        if let signed = object["signedTransactions"] {
            return try strings(signed, "signedTransactions").enumerated().map {
                RawItem(jws: $0.element, kind: .transaction, source: "\(file): signedTransactions[\($0.offset)]")
            }
        }
        if let history = object["notificationHistory"] {
            guard let entries = history as? [[String: Any]] else { throw CommandFailure("\(file): notificationHistory is not an array of objects") }
            return try entries.enumerated().map { index, entry in
                guard let payload = entry["signedPayload"] as? String else {
                    throw CommandFailure("\(file): notificationHistory[\(index)] has no signedPayload")
                }
                let attempts = (entry["sendAttempts"] as? [[String: Any]] ?? []).compactMap { attempt -> NotificationDelivery.Attempt? in
                    guard let date = (attempt["attemptDate"] as? NSNumber)?.int64Value, let result = attempt["sendAttemptResult"] as? String else { return nil }
                    return NotificationDelivery.Attempt(date: AppStoreJSON.date(fromMilliseconds: date), result: result)
                }
                return RawItem(jws: payload, kind: .notification, source: "\(file): notificationHistory[\(index)]", sendAttempts: attempts)
            }
        }
        if let groups = object["data"] as? [[String: Any]] {
            var items: [RawItem] = []
            for (groupIndex, group) in groups.enumerated() {
                for (index, last) in (group["lastTransactions"] as? [[String: Any]] ?? []).enumerated() {
                    let place = "\(file): data[\(groupIndex)].lastTransactions[\(index)]"
                    guard let transaction = last["signedTransactionInfo"] as? String, let renewal = last["signedRenewalInfo"] as? String else {
                        throw CommandFailure("\(place) lacks signedTransactionInfo or signedRenewalInfo")
                    }
                    items.append(RawItem(jws: transaction, kind: .transaction, source: "\(place).signedTransactionInfo"))
                    var renewalItem = RawItem(jws: renewal, kind: .renewalInfo, source: "\(place).signedRenewalInfo")
                    if let status = (last["status"] as? NSNumber)?.int32Value, let original = last["originalTransactionId"] as? String {
                        renewalItem.status = (Status(rawValue: status), original)
                    }
                    items.append(renewalItem)
                }
            }
            return items
        }
        if let payload = object["signedPayload"] as? String { return [RawItem(jws: payload, kind: .notification, source: "\(file): signedPayload")] }
        if let transaction = object["signedTransactionInfo"] as? String {
            return [RawItem(jws: transaction, kind: .transaction, source: "\(file): signedTransactionInfo")]
        }
        if let appTransaction = object["signedAppTransactionInfo"] as? String {
            return [RawItem(jws: appTransaction, kind: .appTransaction, source: "\(file): signedAppTransactionInfo")]
        }
        throw CommandFailure("\(file): not an App Store Server API answer the import reads (a transaction history page, subscription statuses, a notification history page, or {\"signedPayload\": …})")
    }

    // MARK: Identity

    /// The app and environment the data is for, read from the data before anything is verified
    /// (verification then checks every item against them).
    private static func identity(of items: [RawItem], bundleId: String?) throws -> (bundleId: String, environment: Environment, appAppleId: Int64?) {
        var foundBundle: String?
        var environment: Environment?
        var appAppleId: Int64?
        for item in items {
            guard let compact = try? CompactJWS(item.jws) else { continue }
            switch item.kind ?? kind(of: compact) {
            case .transaction?:
                guard let payload = try? AppStoreJSON.decode(JWSTransactionDecodedPayload.self, from: compact.payloadData) else { continue }
                foundBundle = foundBundle ?? payload.bundleId
                environment = environment ?? payload.environment
            case .notification?:
                guard let payload = try? AppStoreJSON.decode(ResponseBodyV2DecodedPayload.self, from: compact.payloadData) else { continue }
                foundBundle = foundBundle ?? payload.data?.bundleId
                environment = environment ?? payload.data?.environment
                appAppleId = appAppleId ?? payload.data?.appAppleId
            case .appTransaction?:
                guard let payload = try? AppStoreJSON.decode(AppTransaction.self, from: compact.payloadData) else { continue }
                foundBundle = foundBundle ?? payload.bundleId
                environment = environment ?? payload.receiptType
                appAppleId = appAppleId ?? payload.appAppleId
            case .renewalInfo?, nil:
                continue
            }
        }
        guard let found = bundleId ?? foundBundle else {
            throw CommandFailure("the data names no app (no transaction or notification with a bundleId); pass --bundle-id")
        }
        guard let environment else { throw CommandFailure("the data names no environment (no transaction or notification carries one)") }
        return (found, environment, appAppleId)
    }

    private static func kind(of compact: CompactJWS) -> RawItem.Kind? {
        switch SignedDataKind.detect(payload: compact.payloadData) {
        case .transaction?: return .transaction
        case .renewalInfo?: return .renewalInfo
        case .notification?: return .notification
        case .appTransaction?: return .appTransaction
        case nil: return nil
        }
    }

    // MARK: Checking

    private static func add(_ item: RawItem, to history: inout SignedHistory, verifier: SignedDataVerifier?) throws(VerificationError) {
        let compact: CompactJWS
        do { compact = try CompactJWS(item.jws) } catch { throw VerificationError(.invalidJWTFormat, "not a JWS: \(error.description)") }
        guard let kind = item.kind ?? kind(of: compact) else {
            throw VerificationError(.invalidJWTFormat, "the payload is not a transaction, renewal info, notification or app transaction")
        }
        switch kind {
        case .transaction:
            history.transactions.append(.init(try transaction(item.jws, verifier), source: item.source))
        case .renewalInfo:
            let info = try renewalInfo(item.jws, verifier)
            history.renewalInfos.append(.init(info, source: item.source))
            if let (status, original) = item.status {
                history.statuses.append(SignedHistory.StatusClaim(originalTransactionID: original, status: status,
                                                                  signedDate: info.signedDate ?? .distantPast, source: item.source))
            }
        case .notification:
            let payload: ResponseBodyV2DecodedPayload = if let verifier { try verifier.verifyAndDecodeNotification(item.jws) } else { try decodeOnly(item.jws) }
            let embeddedTransaction = try payload.data?.signedTransactionInfo.map { (jws) throws(VerificationError) in try Self.transaction(jws, verifier) }
            let embeddedRenewalInfo = try payload.data?.signedRenewalInfo.map { (jws) throws(VerificationError) in try Self.renewalInfo(jws, verifier) }
            history.notifications.append(SignedHistory.Notification(payload: payload, transaction: embeddedTransaction, renewalInfo: embeddedRenewalInfo,
                                                                    sendAttempts: item.sendAttempts, source: item.source))
        case .appTransaction:
            let payload: AppTransaction = if let verifier { try verifier.verifyAndDecodeAppTransaction(item.jws) } else { try decodeOnly(item.jws) }
            history.appTransactions.append(.init(payload, source: item.source))
        }
    }

    private static func transaction(_ jws: String, _ verifier: SignedDataVerifier?) throws(VerificationError) -> JWSTransactionDecodedPayload {
        if let verifier { return try verifier.verifyAndDecodeTransaction(jws) }
        return try decodeOnly(jws)
    }

    private static func renewalInfo(_ jws: String, _ verifier: SignedDataVerifier?) throws(VerificationError) -> JWSRenewalInfoDecodedPayload {
        if let verifier { return try verifier.verifyAndDecodeRenewalInfo(jws) }
        return try decodeOnly(jws)
    }

    /// Decodes without checking anything (`--unverified`).
    private static func decodeOnly<Payload: SignedPayload>(_ jws: String) throws(VerificationError) -> Payload {
        let compact: CompactJWS
        do { compact = try CompactJWS(jws) } catch { throw VerificationError(.invalidJWTFormat, "not a JWS: \(error.description)") }
        do { return try AppStoreJSON.decode(Payload.self, from: compact.payloadData) } catch {
            throw VerificationError(.invalidJWTFormat, "the payload does not decode: \(error)")
        }
    }
}
