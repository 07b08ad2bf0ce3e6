import AppStoreModels
import Foundation
import StoreKitCatalog

extension SimulatedAppStore {
    // MARK: Time

    /// Moves the manual clock forward and plays every lifecycle event that falls due, in order.
    ///
    /// Each event is played at its own time, so transactions carry the dates they would have had.
    /// Advancing a year of a monthly plan renews it twelve times. The interval is measured from the
    /// clock as the ledger has it once this process holds the lifecycle lease, so two advances at
    /// once add up instead of one undoing the other.
    ///
    /// - Returns: How many events were played.
    @discardableResult
    public func advanceTime(by interval: TimeInterval) throws(AppStoreError) -> Int {
        guard interval >= 0 else { throw .control(.invalidAction, "time only moves forward") }
        return try advanceTime { $0.addingTimeInterval(interval) }
    }

    /// Moves the manual clock to `date`, playing every event due until then; a date in the past
    /// leaves the clock where it is.
    @discardableResult
    public func advanceTime(to date: Date) throws(AppStoreError) -> Int {
        try advanceTime { _ in date }
    }

    /// Moves the manual clock to the date `target` computes from the ledger's current time.
    @discardableResult
    public func advanceTime(_ target: (Date) -> Date) throws(AppStoreError) -> Int {
        guard let manual = clock as? ManualStoreClock else {
            throw .control(.invalidAction, "the store runs on the real clock; only a manual clock can be advanced")
        }
        let played = try withLifecycleLease(wait: true) { () throws(AppStoreError) -> Int in
            let date = target(try currentTime())
            try StoreTimeRange.check(date, "the time to advance to")
            let played = try processDueEvents(upTo: date) { manual.set(to: $0) }
            try writing { _ in manual.set(to: date) }
            return played
        }
        return played ?? 0
    }

    /// Whether a renewal, retry, grace-period end or expiry falls due by `date`: a read, so a caller
    /// that moves a manual clock with real time can tell when an advance would play something.
    public func hasLifecycleEvent(dueBy date: Date) throws(AppStoreError) -> Bool {
        try reading { ledger.nextEventDate(after: nil, notAfter: date) != nil }
    }

    /// Plays every event due by now (for stores on the real clock; cheap when nothing is due).
    ///
    /// Only the process holding the store's lifecycle lease plays events: when another one holds it
    /// (a server, another command), this returns 0 at once and leaves the work to it.
    @discardableResult
    public func processDueEvents() throws(AppStoreError) -> Int {
        try withLifecycleLease(wait: false) { () throws(AppStoreError) -> Int in
            try processDueEvents(upTo: clock.now()) { _ in }
        } ?? 0
    }

    /// Runs `body` holding the lifecycle lease: the one this store holds for good (a server), or one
    /// taken for the call. Returns `nil` when, without `wait`, another holder has it.
    private func withLifecycleLease<Result>(wait: Bool, _ body: () throws(AppStoreError) -> Result) throws(AppStoreError) -> Result? {
        if heldLease != nil { return try body() }
        guard let lease = try storage.acquireLifecycleLease(wait: wait) else { return nil }
        defer { lease.release() }
        return try body()
    }

    /// Takes the lifecycle lease for as long as this store lives (or until ``releaseLifecycleLease()``),
    /// as a server does that plays a real-clock store's renewals: other processes then leave
    /// lifecycle work to it.
    ///
    /// - Returns: Whether the lease is held; with `wait` false, `false` when another holder has it.
    @discardableResult
    public func holdLifecycleLease(wait: Bool) throws(AppStoreError) -> Bool {
        if heldLease == nil { heldLease = try storage.acquireLifecycleLease(wait: wait) }
        return heldLease != nil
    }

    /// Gives up a lease taken with ``holdLifecycleLease(wait:)``.
    public func releaseLifecycleLease() {
        heldLease?.release()
        heldLease = nil
    }

    /// How many lifecycle events one commit plays at most; an advance over many subscribers commits
    /// in chunks, each event keeping its own date.
    static let eventsPerCommit = 512

    /// How many lifecycle events one advance plays at most (a year of 10,000 monthly subscribers is 110,000).
    static let eventsPerCall = 250_000

    /// Plays the events due until `limit` in order of their dates, in chunks of one commit each.
    /// The caller holds the lifecycle lease.
    private func processDueEvents(upTo limit: Date, moveClock: (Date) -> Void) throws(AppStoreError) -> Int {
        var played = 0
        while true {
            // One call does a bounded amount of work; what was played is committed and the clock stands at it.
            guard played < Self.eventsPerCall else {
                throw .control(.invalidAction, "stopped after \(played) lifecycle events at \(clock.now().formatted(.iso8601)); advance again, in smaller steps")
            }
            // Nothing due is found with a read: a served store polls several times a second, and an idle
            // poll must not take the write lock from the processes that purchase.
            guard try reading({ ledger.nextEventDate(after: nil, notAfter: limit) }) != nil else { return played }
            let chunk = try writing { (change) throws(AppStoreError) -> Int in
                var chunk = 0
                var last: Date?
                // Events this chunk scheduled (records it changed are laid over the ledger until the
                // commit), by date: the next instant is the ledger's or one of these.
                var scheduled = ScheduledEvents()
                while chunk < Self.eventsPerCommit {
                    let stored = ledger.nextEventDate(after: last, notAfter: limit).map(AppStoreJSON.milliseconds(from:))
                    let pending = scheduled.earliest.flatMap { $0 <= AppStoreJSON.milliseconds(from: limit) ? $0 : nil }
                    guard let instant = [stored, pending].compactMap({ $0 }).min() else { break }
                    let date = AppStoreJSON.date(fromMilliseconds: instant)
                    var due = Set(ledger.subscriptions(dueAt: date).map(\.originalTransactionID))
                    due.formUnion(scheduled.removeAll(at: instant))
                    moveClock(date)
                    for id in due.sorted() {
                        guard let record = storedSubscription(id, in: change),
                              record.nextEventDate.map({ AppStoreJSON.milliseconds(from: $0) == instant }) == true else { continue }
                        try playEvent(of: record, at: date, change: &change)
                        if let next = change.ledger.subscriptions[id]?.nextEventDate.map(AppStoreJSON.milliseconds(from:)), next > instant {
                            scheduled.add(id, at: next)
                        }
                        chunk += 1
                    }
                    last = date
                }
                return chunk
            }
            played += chunk
            if chunk == 0 { return played }
        }
    }

    private func playEvent(of record: SubscriptionRecord, at date: Date, change: inout Change) throws(AppStoreError) {
        switch record.state {
        case .subscribed: try renew(record, at: date, change: &change)
        case .inGracePeriod: try endGracePeriod(record, at: date, change: &change)
        case .inBillingRetryPeriod: try expire(record, intent: .billingError, subtype: .billingRetry, at: date, change: &change)
        case .expired, .revoked: break
        }
    }

    // MARK: Renewal

    /// The period end that `record` reaches at its scheduled expiration: renew, fail into grace or
    /// billing retry, or expire.
    func renew(_ record: SubscriptionRecord, at date: Date, change: inout Change) throws(AppStoreError) {
        // A commitment billed monthly is paid to its end: turning auto-renew off, or a price increase,
        // takes effect when it ends.
        let committed = record.commitment?.hasPaymentsLeft == true
        if !record.autoRenewEnabled, !committed {
            let declined = record.priceIncrease == .declined
            try expire(record, intent: declined ? .customerDidNotConsentToPriceIncrease : .customerCancelled,
                       subtype: declined ? .priceIncrease : .voluntary, at: date, change: &change)
            return
        }
        if record.priceIncrease == .pending, !committed {
            try expire(record, intent: .customerDidNotConsentToPriceIncrease, subtype: .priceIncrease, at: date, change: &change)
            return
        }
        let renewing = committed ? record.productID : record.autoRenewProductID
        guard catalog().product(id: renewing)?.subscription != nil, !settings.unavailableProducts.contains(renewing) else {
            try expire(record, intent: .productNotAvailable, subtype: .productNotForSale, at: date, change: &change)
            return
        }
        if settings.shouldEnterBillingRetryOnRenewal {
            try failRenewal(record, at: date, change: &change)
            return
        }
        try recordRenewal(record, chargedAt: date, periodStart: date, restartCycle: false, change: &change)
    }

    /// Records a successful renewal: a new transaction with the same original identifier and
    /// `transactionReason` RENEWAL, the next period, `DID_RENEW` (`BILLING_RECOVERY` after a billing issue).
    func recordRenewal(_ record: SubscriptionRecord, chargedAt charge: Date, periodStart: Date, restartCycle: Bool,
                       recovery: Bool = false, change: inout Change) throws(AppStoreError) {
        var record = record
        // A commitment's payments renew its product; the renewal product takes over when it ends.
        let committed = record.commitment?.hasPaymentsLeft == true
        guard let product = catalog().product(id: committed ? record.productID : record.autoRenewProductID), let info = product.subscription,
              let previous = storedTransaction(record.latestTransactionID, in: change)
        else { throw .control(.noSubscriptionFound, "subscription \(record.originalTransactionID) has no current transaction") }
        var offer = record.currentOffer
        if var continuing = offer, continuing.remainingPeriods > 1 {
            continuing.remainingPeriods -= 1
            offer = continuing
        } else {
            offer = record.queuedOffer
            record.queuedOffer = nil
        }
        if offer != nil, product.id != record.productID, offer?.offer.type == .introductoryOffer { offer = nil }
        // The next payment of a commitment, or the first of the next one (same product, same plan).
        var commitment = product.id == record.productID ? record.commitment : nil
        if var current = commitment {
            if current.hasPaymentsLeft {
                current.paymentNumber += 1
            } else {
                current = SubscriptionRecord.Commitment(
                    paymentNumber: 1, totalPayments: current.totalPayments, start: periodStart,
                    end: schedule.end(of: info.period, count: 1, from: periodStart), price: current.price, paymentPrice: current.paymentPrice)
            }
            commitment = current
            offer = nil
        }
        let period = commitment != nil ? SubscriptionPeriod(value: 1, unit: .month) : offer?.period ?? info.period
        if restartCycle || period != record.anchorPeriod || product.id != record.productID || offer?.offer != record.currentOffer?.offer {
            record.anchorDate = periodStart
            record.anchorPeriod = period
            record.periodsSinceAnchor = 1
        } else {
            record.periodsSinceAnchor += 1
        }
        let expiration = schedule.end(of: record.anchorPeriod, count: record.periodsSinceAnchor, from: record.anchorDate)
        let id = change.takeTransactionID()
        var transaction = previous
        transaction.id = id
        transaction.device = nil
        transaction.productID = product.id
        transaction.purchaseDate = charge
        transaction.expirationDate = expiration
        transaction.webOrderLineItemID = change.takeWebOrderLineItemID()
        transaction.reason = .renewal
        transaction.offer = offer?.offer
        transaction.price = commitment?.paymentPrice ?? offer?.price ?? product.priceInMilliunits
        transaction.billing = commitment?.billing
        transaction.revocation = nil
        transaction.isUpgraded = false
        transaction.finishedDate = nil
        transaction.state = .purchased
        if record.priceIncrease == .agreed { record.priceIncrease = nil }
        record.productID = product.id
        record.latestTransactionID = id
        record.expirationDate = expiration
        record.state = .subscribed
        record.currentOffer = offer
        record.commitment = commitment
        record.gracePeriodExpirationDate = nil
        record.billingRetryEndDate = nil
        record.expirationIntent = nil
        change.record(transaction)
        change.ledger.subscriptions[record.originalTransactionID] = record
        try enqueueUpdateForAllDevices(transaction, kind: .renewal, at: clock.now(), change: &change)
        try appendSubscriptionNotification(.didRenew, subtype: recovery ? .billingRecovery : nil, record: record,
                                           transaction: transaction, change: &change)
        try enqueueStatusUpdates(record, change: &change)
        try syncFamily(record, newTransaction: transaction, change: &change)
    }

    /// A renewal the App Store could not bill: grace period first when enabled, then billing retry.
    private func failRenewal(_ record: SubscriptionRecord, at date: Date, change: inout Change) throws(AppStoreError) {
        var record = record
        let period = catalog().product(id: record.productID)?.subscription?.period ?? record.anchorPeriod
        record.billingRetryEndDate = date.addingTimeInterval(schedule.billingRetryPeriod(for: period))
        record.expirationIntent = .billingError
        if settings.billingGracePeriodIsEnabled {
            record.state = .inGracePeriod
            record.gracePeriodExpirationDate = date.addingTimeInterval(schedule.gracePeriod(for: period))
        } else {
            record.state = .inBillingRetryPeriod
        }
        change.ledger.subscriptions[record.originalTransactionID] = record
        try appendSubscriptionNotification(.didFailToRenew, subtype: record.state == .inGracePeriod ? .gracePeriod : nil, record: record,
                                           transaction: latestTransaction(of: record, in: change), change: &change)
        try enqueueStatusUpdates(record, change: &change)
        enqueueMessage(.billingIssue, about: record, change: &change)
        try syncFamily(record, newTransaction: nil, change: &change)
    }

    private func endGracePeriod(_ record: SubscriptionRecord, at date: Date, change: inout Change) throws(AppStoreError) {
        var record = record
        record.state = .inBillingRetryPeriod
        record.gracePeriodExpirationDate = nil
        change.ledger.subscriptions[record.originalTransactionID] = record
        try appendSubscriptionNotification(.gracePeriodExpired, subtype: nil, record: record,
                                           transaction: latestTransaction(of: record, in: change), change: &change)
        try enqueueStatusUpdates(record, change: &change)
        try syncFamily(record, newTransaction: nil, change: &change)
    }

    /// Ends a subscription with an expiration intent and an `EXPIRED` notification.
    func expire(_ record: SubscriptionRecord, intent: ExpirationIntent, subtype: Subtype, at date: Date,
                change: inout Change) throws(AppStoreError) {
        var record = record
        record.state = .expired
        record.expirationIntent = intent
        record.gracePeriodExpirationDate = nil
        record.billingRetryEndDate = nil
        record.currentOffer = nil
        change.ledger.subscriptions[record.originalTransactionID] = record
        try appendSubscriptionNotification(.expired, subtype: subtype, record: record,
                                           transaction: latestTransaction(of: record, in: change), change: &change)
        try enqueueStatusUpdates(record, change: &change)
        if record.familySourceID == nil, catalog().product(id: record.productID)?.subscription?.winBackOffers.contains(where: \.isEligible) == true {
            enqueueMessage(.winBackOffer, about: record, change: &change)
        }
        try syncFamily(record, newTransaction: nil, change: &change)
    }

    /// Resolves a billing issue: a new renewal transaction and `DID_RENEW` `BILLING_RECOVERY`.
    /// Recovery during grace keeps the billing cycle; recovery from billing retry restarts it now.
    /// Given a family member's shared copy, it resolves the purchaser's subscription, and the copies follow.
    public func resolveBillingIssue(originalTransactionID: UInt64) throws(AppStoreError) {
        try writing { (change) throws(AppStoreError) in try resolveBillingIssue(originalTransactionID: originalTransactionID, change: &change) }
    }

    func resolveBillingIssue(originalTransactionID: UInt64, change: inout Change) throws(AppStoreError) {
        // A family member's copy is resolved by resolving the purchaser's subscription: the purchaser pays.
        guard let record = controlledSubscription(originalTransactionID) else {
            throw .control(.noSubscriptionFound, "transaction \(originalTransactionID) has no subscription with a billing issue")
        }
        let now = clock.now()
        switch record.state {
        case .inGracePeriod:
            try recordRenewal(record, chargedAt: now, periodStart: record.expirationDate, restartCycle: false, recovery: true, change: &change)
        case .inBillingRetryPeriod:
            try recordRenewal(record, chargedAt: now, periodStart: now, restartCycle: true, recovery: true, change: &change)
        default:
            throw .control(.invalidAction, "subscription \(originalTransactionID) has no billing issue to resolve (it is \(record.state.rawValue))")
        }
    }

    /// A refund of a subscription transaction: the current period's refund revokes the subscription.
    func refundSubscriptionPeriod(_ transaction: LedgerTransaction, at now: Date, change: inout Change) throws(AppStoreError) {
        guard var record = storedSubscription(transaction.originalID, in: change) else {
            try appendNotification(.refund, subtype: nil, transaction: transaction, at: now, change: &change)
            return
        }
        if record.latestTransactionID == transaction.id {
            record.state = .revoked
            record.autoRenewEnabled = false
            record.gracePeriodExpirationDate = nil
            record.billingRetryEndDate = nil
            change.ledger.subscriptions[record.originalTransactionID] = record
            try enqueueStatusUpdates(record, change: &change)
        }
        try appendSubscriptionNotification(.refund, subtype: nil, record: record, transaction: transaction, change: &change)
        try syncFamily(record, newTransaction: nil, change: &change)
    }

    /// Plays the periods of a back-dated purchase up to now.
    func catchUpBackdated(originalTransactionID: UInt64, behavior: RenewalBehavior, now: Date, change: inout Change) throws(AppStoreError) {
        if behavior == .cancelImmediately, var record = change.ledger.subscriptions[originalTransactionID] {
            record.autoRenewEnabled = false
            change.ledger.subscriptions[originalTransactionID] = record
        }
        var guardCount = 0
        while let record = change.ledger.subscriptions[originalTransactionID], let due = record.nextEventDate, due <= now {
            guardCount += 1
            guard guardCount < 100_000 else { throw .control(.invalidAction, "too many periods to back-date") }
            try playEvent(of: record, at: due, change: &change)
        }
    }

    func latestTransaction(of record: SubscriptionRecord, in change: Change) -> LedgerTransaction? {
        storedTransaction(record.latestTransactionID, in: change)
    }

    // MARK: Family

    /// Keeps the family members' copies of a shareable subscription in step with the purchaser's.
    func syncFamily(_ source: SubscriptionRecord, newTransaction: LedgerTransaction?, change: inout Change) throws(AppStoreError) {
        guard source.familySourceID == nil, let latest = newTransaction ?? latestTransaction(of: source, in: change),
              isFamilyShareable(latest),
              let group = storedAccount(source.account, in: change)?.familyGroup
        else { return }
        let now = clock.now()
        for member in familyMembers(of: group, including: change) where member.name != source.account {
            var memberRecord = (change.ledger.subscriptions.values.first { $0.familySourceID == source.originalTransactionID && $0.account == member.name })
                ?? ledger.subscriptions(SubscriptionQuery(account: member.name, familySourceID: source.originalTransactionID)).first
            let startsSharing = memberRecord == nil
            var memberCopy: LedgerTransaction?
            if let newTransaction {
                let id = change.takeTransactionID()
                var copy = newTransaction
                copy.id = id
                copy.originalID = memberRecord?.originalTransactionID ?? id
                copy.account = member.name
                copy.device = nil
                copy.ownership = .familyShared
                copy.familySourceID = newTransaction.id
                copy.appAccountToken = nil
                copy.appTransactionID = member.appTransactionID
                copy.finishedDate = nil
                // Each copy is a period of the member's own: its own web order line item, as Apple's.
                copy.webOrderLineItemID = newTransaction.webOrderLineItemID == nil ? nil : change.takeWebOrderLineItemID()
                change.record(copy)
                memberCopy = copy
                for device in devices(of: member.name, including: change) {
                    try enqueueUpdate(copy, for: device, kind: .familyShare, at: now, change: &change)
                }
                if memberRecord == nil {
                    memberRecord = source
                    memberRecord?.originalTransactionID = id
                    memberRecord?.account = member.name
                    memberRecord?.familySourceID = source.originalTransactionID
                    memberRecord?.appAccountToken = nil
                }
                memberRecord?.latestTransactionID = id
            }
            guard let memberRecord else { continue }
            let mirrored = memberRecord.following(source)
            change.ledger.subscriptions[mirrored.originalTransactionID] = mirrored
            try enqueueStatusUpdates(mirrored, change: &change)
            // The developer hears about the member's subscription too: when sharing starts, and at each
            // renewal, as the purchaser's was told (a renewal that recovers billing is BILLING_RECOVERY for both).
            // A new period otherwise (an upgrade) is told as the purchaser's was.
            if let memberCopy {
                let purchasers = change.ledger.appendedNotifications.last { $0.transactionID == newTransaction?.id }
                if startsSharing {
                    try appendSubscriptionNotification(.subscribed, subtype: .initialBuy, record: mirrored, transaction: memberCopy, change: &change)
                } else if let purchasers {
                    try appendSubscriptionNotification(purchasers.type, subtype: purchasers.subtype, record: mirrored, transaction: memberCopy, change: &change)
                } else if memberCopy.reason == .renewal {
                    try appendSubscriptionNotification(.didRenew, subtype: nil, record: mirrored, transaction: memberCopy, change: &change)
                }
            }
        }
    }
}

/// Lifecycle events a chunk of ``SimulatedAppStore`` work has scheduled but not yet committed, by
/// instant (milliseconds): the earliest is found in logarithmic time, so a chunk of many events does
/// not rescan what it changed at every instant.
struct ScheduledEvents {
    private var instants: [Int64] = []
    private var subscriptions: [Int64: [UInt64]] = [:]

    /// The earliest instant with an event, if any.
    var earliest: Int64? { instants.first }

    mutating func add(_ originalTransactionID: UInt64, at instant: Int64) {
        if subscriptions[instant] == nil { push(instant) }
        subscriptions[instant, default: []].append(originalTransactionID)
    }

    /// The subscriptions with an event at `instant`, which is taken out (it must be the earliest).
    mutating func removeAll(at instant: Int64) -> [UInt64] {
        guard instants.first == instant, let due = subscriptions.removeValue(forKey: instant) else { return [] }
        popEarliest()
        return due
    }

    // A binary min-heap of the instants.
    private mutating func push(_ instant: Int64) {
        instants.append(instant)
        var child = instants.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard instants[child] < instants[parent] else { break }
            instants.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func popEarliest() {
        instants.swapAt(0, instants.count - 1)
        instants.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < instants.count, instants[left] < instants[smallest] { smallest = left }
            if right < instants.count, instants[right] < instants[smallest] { smallest = right }
            guard smallest != parent else { return }
            instants.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
