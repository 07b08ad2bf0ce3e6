import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import AppStoreSimulatorSQL
import Foundation
import StoreKitCatalog

/// `storekit store import`: a customer's real history, verified, into a new or existing local store.
struct StoreImport: Command {
    static let declaration = CommandDeclaration("store import", group: .store, abstract: "Import signed App Store data (JWS lines, Server API answers) into the store in DIR, making it if needed.", arguments: [
        .positional("DIR", "the store's folder (made when it does not exist)"),
        .list("--from", "FILE", "files of JWS lines or saved App Store Server API answers (several after one --from, as a shell glob gives them)", required: true),
        .repeating("--root", "CERT", "a root certificate to verify with (Apple's AppleRootCA-G3.cer for real data)"),
        .flag("--unverified", "import without checking anything (never grant from such data)"),
        .option("--config", "FILE", "the .storekit file to sell (default: made from the products the data names)"),
        .option("--bundle-id", "ID", "the app whose data to take"),
        .option("--account", "NAME", "the account the history belongs to"),
        .option("--ocsp-url", "URL|none", "where a new store's certificates say the OCSP responder is"),
        .flag("--json", "print JSON"),
    ], discussion: "Give --root (one or more) or --unverified.")

    var directory: String
    var files: [String]
    var roots: [String]
    var unverified: Bool
    var configurationPath: String?
    var bundleId: String?
    var account: String?
    var ocspURL: String?
    var json: Bool

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        files = try arguments.values("--from")
        roots = try arguments.values("--root")
        unverified = arguments.flag("--unverified")
        configurationPath = try arguments.value("--config")
        bundleId = try arguments.value("--bundle-id")
        account = try arguments.value("--account")
        let ocsp = try arguments.value("--ocsp-url", expected: "an http URL or none") { text -> String? in
            text == "none" ? "" : (URL(string: text)?.scheme == "http" ? text : nil)
        } ?? StoreCreate.defaultOCSPURL
        ocspURL = ocsp.isEmpty ? nil : ocsp
        json = arguments.flag("--json")
        directory = try arguments.positional("DIR", missing: "DIR, the store's folder: it comes before --from, whose files run to the next option")
        guard !files.isEmpty else { throw ValidationError("missing --from FILE: a file of JWS lines or a saved App Store Server API answer") }
        guard roots.isEmpty == unverified else {
            throw ValidationError(unverified ? "--unverified and --root exclude each other" : "missing --root CERT (Apple's root, AppleRootCA-G3.cer, for real data), or --unverified to import without checking anything")
        }
    }

    func run(console: Console) async throws {
        let trust: SignedHistoryReader.Trust
        if unverified {
            console.printError("warning: --unverified: NOTHING WAS CHECKED. Signatures, certificate chains, the app and the environment of every item are taken on trust; never grant anything from data imported this way")
            trust = .unverified
        } else {
            var certificates: [Certificate] = []
            for path in roots {
                do { certificates.append(try Certificate(contentsOf: URL(fileURLWithPath: path))) } catch { throw CommandFailure("--root \(path): \(error)") }
            }
            trust = .roots(certificates)
        }
        var reader = SignedHistoryReader(trust: trust, bundleId: bundleId)
        let history = try reader.read(files)
        guard let identity = reader.identity else { throw CommandFailure("the data names no app") }

        let url = URL(fileURLWithPath: directory)
        let existing = FileManager.default.fileExists(atPath: StoreDirectory.databaseURL(in: url).path)
        var added: [SignedHistory.InferredProduct] = []
        let store: SimulatedAppStore
        if existing {
            guard configurationPath == nil else {
                throw ValidationError("--config: \(directory) holds a store, which sells its own configuration; --config is for the store an import makes")
            }
            store = try await StoreAccess.open(directory)
        } else {
            var base = StoreKitConfiguration()
            if let configurationPath {
                let result = try StoreKitConfiguration.load(contentsOf: URL(fileURLWithPath: configurationPath))
                for warning in result.warnings { console.printError("warning: \((configurationPath as NSString).lastPathComponent): \(warning)") }
                base = result.configuration
            }
            let completed = history.configuration(completing: base)
            added = completed.added
            guard identity.environment != .production || identity.appAppleId != nil else {
                throw CommandFailure("Production data without the app's Apple ID: include a notification or app transaction, which carry it")
            }
            let start = history.signedDates.max() ?? Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
            store = try await StoreAccess.create(
                at: url, configuration: completed.configuration,
                identity: StoreIdentity(bundleId: identity.bundleId, environment: identity.environment, appAppleId: identity.appAppleId),
                clockMode: .manual, start: start, ocspURL: ocspURL)
        }
        let result: SimulatedAppStore.HistoryImport
        do {
            result = try await store.importSignedHistory(history, options: .init(accountName: account))
        } catch {
            // A store this command made holds nothing else: it goes with the failed import.
            if !existing { try? FileManager.default.removeItem(at: url) }
            throw error
        }
        if !added.isEmpty {
            let generated = url.appendingPathComponent("generated.storekit")
            try await store.storeKitConfiguration.jsonData().write(to: generated)
        }
        if json {
            let object: [String: Any] = [
                "accounts": result.accounts, "transactions": result.transactionCount, "subscriptions": result.subscriptionCount,
                "notifications": result.notificationCount, "mergedCopies": result.mergedCopies, "verified": !unverified,
                "clock": AppStoreJSON.milliseconds(from: result.clock),
                "addedProducts": added.map { ["productId": $0.productID, "period": $0.period?.iso8601 as Any, "evidence": $0.periodEvidence as Any] },
                "contradictions": result.contradictions.map { ["source": $0.source, "message": $0.message] },
            ]
            console.print(try PrettyJSON.string(from: object))
            return
        }
        let verb = existing ? "added to the store in" : "made a \(identity.environment.rawValue) store for \(identity.bundleId) in"
        console.print("\(verb) \(directory): \(result.transactionCount) transactions, \(result.subscriptionCount) subscriptions, \(result.notificationCount) notifications from \(history.itemCount) items (\(result.mergedCopies) copies merged), \(unverified ? "UNVERIFIED" : "every item verified")")
        console.print("accounts: \(result.accounts.joined(separator: ", "))")
        for product in added {
            let period = product.period.map { ", \($0.iso8601) (\(product.periodEvidence ?? ""))" } ?? ""
            console.print("added \(product.productID): \(product.kind.rawValue)\(product.subscriptionGroupID.map { ", group \($0)" } ?? "")\(period), \(SignedHistory.displayPrice(product.price)) \(product.currency ?? "")")
        }
        if !added.isEmpty { console.print("the configuration with the added products: \(url.appendingPathComponent("generated.storekit").path)") }
        console.print("clock at \(StoreAccess.iso(result.clock))")
        if result.contradictions.isEmpty {
            console.print("0 contradictions")
        } else {
            console.print("\(result.contradictions.count) contradictions:")
            for contradiction in result.contradictions { console.print("  \(contradiction.source): \(contradiction.message)") }
        }
    }
}

/// `storekit store export`: an account's history as the App Store Server API answers it.
struct StoreExport: Command {
    static let declaration = CommandDeclaration("store export", group: .store, abstract: "Write an account's history as App Store Server API answers (transaction history pages, subscription statuses, notification history pages) into OUT.", arguments: [
        .positional("DIR", "the store's folder"),
        .positional("OUT", "the folder to write the answers into"),
        .option("--account", "NAME", "the account to export", required: true),
        .option("--format", "server-api", "the answers' format (server-api)", required: true),
    ])

    /// Transactions per history page, as Apple's Get Transaction History.
    static let pageSize = 20

    var directory: String
    var account: String
    var output: String

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        account = try arguments.requiredValue("--account")
        let format = try arguments.requiredValue("--format")
        guard format == "server-api" else { throw ValidationError("--format: the one format is server-api, not \"\(format)\"") }
        directory = try arguments.positional("DIR", missing: "DIR, the store's folder: it comes before --from, whose files run to the next option")
        output = try arguments.positional("OUT")
    }

    func run(console: Console) async throws {
        let store = try await StoreAccess.open(directory)
        guard let transactions = try await store.customerTransactions(account: account) else {
            throw CommandFailure("no account \(account) in \(directory)")
        }
        let out = URL(fileURLWithPath: output)
        if let contents = try? FileManager.default.contentsOfDirectory(atPath: out.path), !contents.isEmpty {
            throw CommandFailure("\(output) is not empty; export into a new or empty folder")
        }
        // A customer's purchase history: the folder is its owner's alone (0700), each file 0600.
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        _ = chmod(out.path, 0o700)
        let identity = store.identity
        var files: [String] = []
        func write<Value: Encodable>(_ value: Value, _ name: String) throws {
            let path = out.appendingPathComponent(name).path
            guard FileManager.default.createFile(atPath: path, contents: try AppStoreJSON.encode(value, prettyPrinted: true),
                                                 attributes: [.posixPermissions: 0o600]) else {
                throw CommandFailure("cannot write \(path)")
            }
            files.append(name)
        }

        let pages = stride(from: 0, to: max(transactions.count, 1), by: Self.pageSize).map { Array(transactions[$0..<min($0 + Self.pageSize, transactions.count)]) }
        for (index, page) in pages.enumerated() {
            let revision = Base64URL.encode(Data("export:\(index + 1)".utf8))
            try write(HistoryResponse(revision: revision, hasMore: index + 1 < pages.count, bundleId: identity.bundleId, appAppleId: identity.appAppleId,
                                      environment: identity.environment.rawValue, signedTransactions: try await store.signedForServer(page)),
                      "transaction-history-\(index + 1).json")
        }

        var statuses = StatusResponse(environment: identity.environment.rawValue, bundleId: identity.bundleId, appAppleId: identity.appAppleId, data: [])
        if let first = transactions.first, let answer = try await store.statusResponse(ofTransaction: first.id) { statuses = answer }
        try write(statuses, "subscription-statuses.json")

        // The account's notifications, a page of the outbox at a time.
        let ids = Set(try await store.ledgerTransactions(account: account).map(\.id))
        var items: [NotificationHistoryResponseItem] = []
        var after: Int64 = 0
        let now = try await store.currentTime()
        while true {
            let page = try await store.notificationHistory(from: .distantPast, to: now, after: after, limit: 500)
            guard let last = page.last else { break }
            after = last.record.sequence
            for (record, signed) in page where record.transactionID.map(ids.contains) == true {
                items.append(NotificationHistoryResponseItem(signedPayload: signed.signedPayload, sendAttempts: record.delivery.sendAttempts))
            }
        }
        let notificationPages = stride(from: 0, to: max(items.count, 1), by: Self.pageSize).map { Array(items[$0..<min($0 + Self.pageSize, items.count)]) }
        for (index, page) in notificationPages.enumerated() {
            let more = index + 1 < notificationPages.count
            try write(NotificationHistoryResponse(paginationToken: more ? Base64URL.encode(Data("export:\(index + 2)".utf8)) : nil, hasMore: more,
                                                  notificationHistory: page),
                      "notification-history-\(index + 1).json")
        }
        console.print("wrote \(transactions.count) transactions, \((statuses.data ?? []).reduce(0) { $0 + ($1.lastTransactions?.count ?? 0) }) subscription statuses and \(items.count) notifications of \(account) to \(output):")
        for file in files { console.print("  \(file)") }
    }
}
