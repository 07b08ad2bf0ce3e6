import AppStoreModels
import Foundation
import StoreKitCatalog

extension SimulatedAppStore {
    /// Whether a product's purchases are shared with the buyer's family.
    func isFamilyShareable(_ transaction: LedgerTransaction) -> Bool {
        guard transaction.ownership == .purchased, transaction.productKind == .nonConsumable || transaction.productKind == .autoRenewable
        else { return false }
        return catalog().product(id: transaction.productID)?.isFamilyShareable ?? false
    }

    /// Gives every other member of the buyer's family a `FAMILY_SHARED` copy of a shareable purchase.
    func shareWithFamily(_ transaction: LedgerTransaction, at now: Date, change: inout Change) throws(AppStoreError) {
        guard isFamilyShareable(transaction), transaction.isPurchased, !transaction.isRevoked,
              let group = storedAccount(transaction.account, in: change)?.familyGroup
        else { return }
        for member in familyMembers(of: group, including: change) where member.name != transaction.account {
            guard familyCopy(of: transaction.id, for: member.name, in: change) == nil else { continue }
            let id = change.takeTransactionID()
            var copy = LedgerTransaction(
                id: id, originalID: id, account: member.name, device: nil, productID: transaction.productID,
                productKind: transaction.productKind, subscriptionGroupID: transaction.subscriptionGroupID,
                purchaseDate: now, originalPurchaseDate: now, expirationDate: transaction.expirationDate, quantity: 1,
                ownership: .familyShared, familySourceID: transaction.id,
                webOrderLineItemID: transaction.webOrderLineItemID == nil ? nil : change.takeWebOrderLineItemID(),
                appAccountToken: nil, storefront: storefront(of: member), price: transaction.price, reason: transaction.reason,
                offer: nil, state: .purchased)
            copy.currency = transaction.currency
            copy.appTransactionID = member.appTransactionID
            change.record(copy)
            for device in devices(of: member.name, including: change) {
                try enqueueUpdate(copy, for: device, kind: .familyShare, at: now, change: &change)
            }
        }
    }

    /// Revokes the family copies of a purchase, with a `REVOKE` notification for each.
    func revokeFamilyCopies(of sourceID: UInt64, reason: RevocationReason, at now: Date, change: inout Change) throws(AppStoreError) {
        let copies = ledger.transactions(TransactionQuery(familySourceID: sourceID)).filter { !$0.isRevoked }
        for original in copies {
            var copy = change.ledger.transactions[original.id] ?? original
            copy.revocation = .init(date: now, reason: reason, type: .familyRevoke)
            change.record(copy)
            try enqueueUpdateForAllDevices(copy, kind: .revocation, at: now, change: &change)
            try appendNotification(.revoke, subtype: nil, transaction: copy, at: now, change: &change)
        }
    }

    func familyMembers(of group: String, including change: Change) -> [StoreAccount] {
        var all = Dictionary(ledger.accounts(familyGroup: group).map { ($0.name, $0) }, uniquingKeysWith: { $1 })
        for (name, account) in change.ledger.accounts { all[name] = account }
        return all.values.filter { $0.familyGroup == group }.sorted { $0.name < $1.name }
    }

    func familyCopy(of sourceID: UInt64, for account: String, in change: Change) -> LedgerTransaction? {
        let pending = change.ledger.transactions.values.first { $0.familySourceID == sourceID && $0.account == account && !$0.isRevoked }
        return pending ?? ledger.transactions(TransactionQuery(familySourceID: sourceID)).first { $0.account == account && !$0.isRevoked }
    }

    /// Puts an account in a Family Sharing group, or takes it out with `nil`.
    ///
    /// Joining shares the shareable purchases of both sides; leaving revokes what the account got
    /// from the family and what the family got from the account, each with a `REVOKE` notification.
    public func setFamilyGroup(_ group: String?, for accountName: String) throws(AppStoreError) {
        try writing { (change) throws(AppStoreError) in try setFamilyGroup(group, for: accountName, change: &change) }
    }

    private func setFamilyGroup(_ group: String?, for accountName: String, change: inout Change) throws(AppStoreError) {
        var (account, _) = try register(account: accountName, device: nil, in: &change)
        guard account.familyGroup != group else { return }
        let now = clock.now()
        if account.familyGroup != nil {
            // What the account got from the family, and what the family got from the account.
            var shared = ledger.transactions(TransactionQuery(account: accountName)).filter { $0.ownership == .familyShared }
            for own in ledger.transactions(TransactionQuery(account: accountName)) where own.ownership == .purchased {
                shared += ledger.transactions(TransactionQuery(familySourceID: own.id))
            }
            for transaction in shared.sorted(by: { $0.id < $1.id }) where !transaction.isRevoked {
                var copy = transaction
                copy.revocation = .init(date: now, reason: .refundedForOtherReason, type: .familyRevoke)
                change.record(copy)
                try enqueueUpdateForAllDevices(copy, kind: .revocation, at: now, change: &change)
                try appendNotification(.revoke, subtype: nil, transaction: copy, at: now, change: &change)
            }
        }
        account.familyGroup = group
        change.ledger.accounts[accountName] = account
        if let group {
            for member in familyMembers(of: group, including: change) {
                for transaction in ledger.transactions(TransactionQuery(account: member.name, entitlementCandidatesOnly: true))
                where transaction.ownership == .purchased {
                    try shareWithFamily(transaction, at: now, change: &change)
                }
            }
        }
    }

    /// Stops sharing one purchase with the family: every copy is revoked (`REVOKE`).
    public func stopFamilySharing(transactionID: UInt64) throws(AppStoreError) {
        try writing { (change) throws(AppStoreError) in
            guard let transaction = ledger.transaction(transactionID) else { throw .control(.noTransactionFound, "no transaction \(transactionID)") }
            guard transaction.ownership == .purchased else {
                throw .control(.invalidAction, "transaction \(transactionID) is itself a family-shared copy")
            }
            try revokeFamilyCopies(of: transactionID, reason: .refundedForOtherReason, at: clock.now(), change: &change)
        }
    }
}
