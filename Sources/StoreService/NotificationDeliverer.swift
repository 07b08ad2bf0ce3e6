import AppStoreModels
import AppStoreSimulator
import BlockingWork
import Foundation
import HTTPClient
import HTTPService
import OpenStoreKit
import ServiceLogging
import Synchronization

/// Posts the store's App Store Server Notifications V2 to its notification URL as Apple does:
/// `{"signedPayload": "…"}`, 200–206 is success, anything else is a failed attempt (with Apple's
/// `sendAttemptResult`) retried 1, 12, 24, 48 and 72 hours later on the store's clock.
///
/// Several posts are in flight at once (``Options/inFlight``, 8 unless set): Apple delivers
/// concurrently and does not promise an order, but this sender keeps one per original transaction:
/// of the notifications due together, a later one about the same subscription or purchase is posted
/// only after the earlier one's attempt has ended. A slow or failing receiver holds only the slots of
/// its own deliveries; the schedule of retries is Apple's, unchanged.
///
/// It runs beside the server, never in a purchase's way: notifications are claimed a page at a time
/// in a short unit of work (the outbox is never read whole), signed ahead of their posts on a thread
/// of the sender's own (so posts leave together when slots free up, as a receiver that groups its
/// commits likes them), and their attempts recorded together in one commit per batch of answers.
public final class NotificationDeliverer: Sendable {
    /// How a deliverer sends.
    public struct Options: Sendable {
        /// Posts in flight at once to the notification URL.
        public var inFlight: Int
        /// How long a receiver has to answer.
        public var timeout: Duration
        /// How often the outbox is looked at while nothing is due.
        public var idlePoll: Duration

        /// Where attempts are counted, when the server exports metrics.
        public var metrics: MetricsRegistry?
        /// Where each failed attempt, and each success after failed ones, is logged.
        public var logger: Logger

        public init(inFlight: Int = 8, timeout: Duration = .seconds(10), idlePoll: Duration = .milliseconds(200), metrics: MetricsRegistry? = nil,
                    logger: Logger = .disabled) {
            self.inFlight = max(1, inFlight)
            self.timeout = timeout
            self.idlePoll = idlePoll
            self.metrics = metrics
            self.logger = logger
        }
    }

    /// What a deliverer has done so far.
    public struct Statistics: Sendable, Hashable {
        /// Attempts that ended (recorded or about to be).
        public var attempts = 0
        /// Of those, the ones the receiver accepted.
        public var successes = 0
        /// The most posts that were in flight at once.
        public var maxInFlight = 0
        /// The time posts spent in flight, added up: over a stretch of delivery, the mean number in
        /// flight is its growth divided by the stretch's length.
        public var secondsInFlight = 0.0

        public init() {}
    }

    let store: SimulatedAppStore
    let options: Options
    private let counters = Mutex(Statistics())
    private let attempts: Counter?
    /// Where claimed pages are signed: a thread of its own, so that long runs of signing never
    /// hold the cooperative pool's threads from the posts' answers and the loop.
    private let signing = BlockingQueue(label: "NotificationDeliverer signing")
    /// Kept-alive connections to the notification URL's origin when it is plain `http` (a backend on
    /// this machine or network): a post is a write and a read on an open connection. `https` URLs go
    /// through ``HTTPClient``.
    private let connections = Mutex<(origin: URL, connections: KeepAliveConnections)?>(nil)

    public init(store: SimulatedAppStore, options: Options = Options()) {
        self.store = store
        self.options = options
        attempts = options.metrics?.counter("openstorekit_notification_attempts_total",
                                            help: "Attempts to post a notification, by Apple's sendAttemptResult and by whether it was the first attempt or a retry.",
                                            labels: ["result", "attempt"])
    }

    /// What it has done so far.
    public var statistics: Statistics { counters.withLock { $0 } }

    /// Delivers until cancelled.
    ///
    /// One loop owns the bookkeeping; claiming a page, each post, and recording a batch of ended
    /// attempts are child tasks, so the loop never waits for the store's commits while posts could go.
    public func run() async {
        var state = DeliveryState()
        var pages = PageSize(inFlight: options.inFlight)
        await withTaskGroup(of: Event.self) { group in
            var posts = 0
            var claiming = false
            var recordings = 0
            var ticking = false
            var lastEmptyClaim: ContinuousClock.Instant?
            var warnedURL: String?
            while !Task.isCancelled {
                // Claim a page (signed ahead) while less than a page waits, and not again at once after
                // finding nothing due. Each claim is a commit of the store's, and so is each batch of
                // recorded attempts; the next page is ready before the posts run out.
                let mayClaim = lastEmptyClaim.map { ContinuousClock.now - $0 >= options.idlePoll } ?? true
                if !claiming, state.queued < pages.claim, mayClaim {
                    claiming = true
                    let limit = pages.next(now: .now)
                    let held = state.held
                    group.addTask { [store, signing] in
                        guard let claimed = try? await store.claimDueNotificationRecords(limit: limit, excluding: held) else {
                            return .claimed(url: nil, items: [], refused: await store.takeRefusedNotificationURL())
                        }
                        let records = claimed.records
                        let items = await signing.run { records.map { ($0, try? store.signedNotification($0).signedPayload) } }
                        return .claimed(url: claimed.url, items: items, refused: nil)
                    }
                }
                while posts < options.inFlight, let next = state.nextReady() {
                    posts += 1
                    let now = posts
                    counters.withLock { $0.maxInFlight = max($0.maxInFlight, now) }
                    group.addTask { [self] in .posted(await post(next)) }
                }
                if state.results.count >= pages.record || (posts == 0 && !state.results.isEmpty) {
                    recordings += 1
                    let results = state.takeResults()
                    group.addTask { [store] in
                        _ = try? await store.recordDeliveryAttempts(results)
                        return .recorded(results.map(\.sequence))
                    }
                }
                if posts == 0, !claiming, recordings == 0 {
                    // Nothing in flight and nothing due a moment ago: look again a little later.
                    try? await Task.sleep(for: options.idlePoll)
                    lastEmptyClaim = nil
                    continue
                }
                if !claiming, !ticking, !mayClaim, state.queued < pages.claim, let last = lastEmptyClaim {
                    // Posts in flight (a slow receiver's) must not keep the loop from looking again:
                    // a notification made meanwhile is claimed after the idle poll, not after them.
                    ticking = true
                    let wait = options.idlePoll - (ContinuousClock.now - last)
                    group.addTask { try? await Task.sleep(for: wait); return .tick }
                }
                guard let event = await group.next() else { continue }
                switch event {
                case .posted(let posted):
                    posts -= 1
                    // A server that stops cuts its posts short: such an attempt is not the receiver's
                    // doing. Left unrecorded, its claim lapses and it is tried again.
                    if Task.isCancelled { break }
                    counters.withLock {
                        $0.attempts += 1
                        if posted.result == "SUCCESS" { $0.successes += 1 }
                    }
                    attempts?.increment([posted.result, posted.item.record.delivery.attempts.isEmpty ? "first" : "retry"])
                    log(posted)
                    pages.ended += 1
                    state.finished(posted)
                case .claimed(let url, let items, let refused):
                    claiming = false
                    if let refused, refused != warnedURL {
                        // Once per URL and server run: the poll finds them due again every moment.
                        warnedURL = refused
                        options.logger.warning("notifications are due but the stored notification URL is not one the settings accept (http or https, with a host): nothing is posted to it until another is set",
                                               metadata: ["url": refused])
                    }
                    if let url, !items.isEmpty {
                        state.enqueue(items, url: url)
                        lastEmptyClaim = nil
                    } else {
                        lastEmptyClaim = .now
                    }
                case .recorded(let sequences):
                    recordings -= 1
                    state.released(sequences)
                case .tick:
                    ticking = false
                }
            }
            group.cancelAll()
        }
        // What ended before the stop is recorded; what was cut short is tried again.
        if !state.results.isEmpty { _ = try? await store.recordDeliveryAttempts(state.takeResults()) }
    }

    /// How many notifications a claim takes and a recorded batch holds: a few times the posts in flight
    /// (``PageSize/smallest``), and more, up to ``PageSize/largest``, when the receiver takes posts
    /// faster. A page is what the sender has lately posted in ``PageSize/seconds``: long runs of
    /// notifications cost fewer claims and recordings (each a commit of the store's), and a sender whose
    /// claims wait behind a long advance of the clock takes enough at once to keep posting meanwhile;
    /// a slow receiver gets small pages, posted well within their claim's minute.
    struct PageSize {
        static let smallestFactor = 4
        static let largestFactor = 64
        static let seconds = 2.0

        let smallest: Int
        let largest: Int
        /// The size of the next claim.
        private(set) var claim: Int
        /// Attempts ended since the last measurement.
        var ended = 0
        private var measuredSince: ContinuousClock.Instant?

        init(inFlight: Int) {
            smallest = Self.smallestFactor * inFlight
            largest = Self.largestFactor * inFlight
            claim = smallest
        }

        /// Ended attempts wait for a commit in batches of a quarter page (at least the smallest page).
        var record: Int { max(smallest, claim / 4) }

        /// The size of a claim starting `now`, from the attempts that ended since the last one (measured
        /// over a quarter of a second at least).
        mutating func next(now: ContinuousClock.Instant) -> Int {
            guard let since = measuredSince else {
                measuredSince = now
                return claim
            }
            let elapsed = (now - since) / .seconds(1)
            if elapsed >= 0.25 {
                let rate = Double(ended) / elapsed
                claim = min(largest, max(smallest, Int(rate * Self.seconds)))
                ended = 0
                measuredSince = now
            }
            return claim
        }
    }

    /// What the loop's child tasks report.
    enum Event: Sendable {
        case posted(Posted)
        /// `refused`: a stored notification URL the settings would refuse kept due notifications unclaimed.
        case claimed(url: URL?, items: [(record: NotificationRecord, signedPayload: String?)], refused: String?)
        case recorded([Int64])
        /// The idle poll's wait ended while posts were in flight.
        case tick
    }

    /// Logs an attempt that failed (once, with what comes next), and a success that follows failed ones.
    private func log(_ posted: Posted) {
        let record = posted.item.record
        let earlier = record.delivery.attempts.count
        let metadata: Logger.Metadata = ["notification": record.notificationUUID, "type": record.type.rawValue,
                                         "url": posted.item.url.absoluteString, "attempt": String(earlier + 1)]
        if posted.result != "SUCCESS" {
            options.logger.warning("notification delivery failed: \(posted.result); it is tried again on Apple's schedule", metadata: metadata)
        } else if earlier > 0 {
            options.logger.notice("notification delivered after \(earlier) failed attempt\(earlier == 1 ? "" : "s")", metadata: metadata)
        }
    }

    /// One attempt: the signed record posted, and its result.
    private func post(_ item: DeliveryState.Item) async -> Posted {
        guard let signedPayload = item.signedPayload else { return Posted(item: item, result: "OTHER") }
        let start = ContinuousClock.now
        let result = await post(signedPayload, to: item.url)
        let elapsed = ContinuousClock.now - start
        counters.withLock { $0.secondsInFlight += elapsed / .seconds(1) }
        return Posted(item: item, result: result)
    }

    /// `{"signedPayload":"…"}`. The store's JWS is base64url and dots, which JSON takes as it is.
    /// (Foundation's JSON writer costs more than signing the payload.)
    public static func webhookBody(_ signedPayload: String) -> Data {
        var body = Data(capacity: signedPayload.utf8.count + 20)
        body.append(contentsOf: #"{"signedPayload":""#.utf8)
        body.append(contentsOf: signedPayload.utf8)
        body.append(contentsOf: #""}"#.utf8)
        return body
    }

    /// Posts a signed payload; answers Apple's `sendAttemptResult`.
    func post(_ signedPayload: String, to url: URL) async -> String {
        let body = Self.webhookBody(signedPayload)
        do {
            let request = HTTPClient.Request.json("POST", url, body: body, timeout: options.timeout)
            let answer = if let kept = keptAliveConnections(to: url) { try await kept.send(request) } else { try await HTTPClient.shared.send(request) }
            return (200...206).contains(answer.status) ? "SUCCESS" : "UNSUCCESSFUL_HTTP_RESPONSE_CODE"
        } catch HTTPClient.Failure.timedOut {
            return "TIMED_OUT"
        } catch HTTPClient.Failure.unreachable(_, _, let cause) {
            switch cause {
            case .noConnection: return "NO_RESPONSE"
            case .connectionLost: return "PREMATURE_CLOSE"
            case .tls: return "TLS_ISSUE"
            case .redirects: return "CIRCULAR_REDIRECT"
            case .badResponse: return "INVALID_RESPONSE"
            case .other: return "SOCKET_ISSUE"
            }
        } catch {
            return "OTHER"
        }
    }

    /// The kept-alive connections to `url`'s origin, made for the first post there (and again when the
    /// notification URL moves to another origin); `nil` for `https`.
    private func keptAliveConnections(to url: URL) -> KeepAliveConnections? {
        connections.withLock { current -> KeepAliveConnections? in
            if let current, current.origin.host == url.host, current.origin.port == url.port, url.scheme == "http" { return current.connections }
            guard let made = KeepAliveConnections(origin: url, maxIdle: options.inFlight) else { return nil }
            current = (url, made)
            return made
        }
    }

    struct Posted: Sendable {
        let item: DeliveryState.Item
        let result: String
    }
}

/// The sender's bookkeeping, owned by its one loop: claimed notifications waiting for a slot, in
/// order; which original transactions have a post in flight (later notifications about them wait
/// behind it); and ended attempts not yet recorded.
struct DeliveryState {
    struct Item: Sendable {
        let record: NotificationRecord
        /// The JWS to post (`nil` when it could not be signed).
        let signedPayload: String?
        let url: URL
        /// Notifications with the same lane are posted one after another, in sequence order.
        let lane: String
    }

    private var ready: [Item] = []
    private var readyStart = 0
    private var waitingBehind: [String: [Item]] = [:]
    private var busyLanes: Set<String> = []
    /// The sequences this sender holds, from their claim until their attempt is recorded. A claim is a
    /// lease of ``SimulatedAppStore/deliveryLease`` in real time; one that lapses while its post waits
    /// for a slow receiver is claimed again, and a second claim of one must not post it twice.
    private(set) var held: Set<Int64> = []
    private(set) var results: [DeliveryAttemptResult] = []
    /// Claimed notifications not yet posted.
    private(set) var queued = 0

    /// Claimed records with their signed payloads, oldest first.
    mutating func enqueue(_ claimed: [(record: NotificationRecord, signedPayload: String?)], url: URL) {
        for (record, signedPayload) in claimed.sorted(by: { $0.record.sequence < $1.record.sequence }) where held.insert(record.sequence).inserted {
            let lane = record.transaction.map { "original \($0.originalTransactionId ?? "")" } ?? "sequence \(record.sequence)"
            let item = Item(record: record, signedPayload: signedPayload, url: url, lane: lane)
            queued += 1
            if busyLanes.contains(lane) || waitingBehind[lane] != nil {
                waitingBehind[lane, default: []].append(item)
            } else {
                busyLanes.insert(lane)
                ready.append(item)
            }
        }
    }

    /// Recorded attempts: their notifications are no longer held, and a later claim may take them (a
    /// failure, when its retry falls due).
    mutating func released(_ sequences: [Int64]) {
        held.subtract(sequences)
    }

    /// The ended attempts not yet recorded, handed over once.
    mutating func takeResults() -> [DeliveryAttemptResult] {
        defer { results.removeAll() }
        return results
    }

    /// The next notification that may be posted now.
    mutating func nextReady() -> Item? {
        guard readyStart < ready.count else { return nil }
        let item = ready[readyStart]
        readyStart += 1
        if readyStart > 256, readyStart * 2 > ready.count {
            ready.removeFirst(readyStart)
            readyStart = 0
        }
        queued -= 1
        return item
    }

    /// An attempt ended: its result waits to be recorded, and the next of its lane may go.
    mutating func finished(_ posted: NotificationDeliverer.Posted) {
        results.append(DeliveryAttemptResult(sequence: posted.item.record.sequence, result: posted.result))
        let lane = posted.item.lane
        if var behind = waitingBehind[lane], !behind.isEmpty {
            ready.append(behind.removeFirst())
            waitingBehind[lane] = behind.isEmpty ? nil : behind
        } else {
            busyLanes.remove(lane)
        }
    }
}
