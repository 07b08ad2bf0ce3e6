import AppStoreBackend
import Foundation

/// `storekit backend retention-rule add`: a rule `backend serve` answers the App Store's Get
/// Retention Message requests with (`POST /apple/retention`).
struct BackendRetentionRuleAddCommand: Command {
    static let declaration = CommandDeclaration("backend retention-rule add", group: .backend, abstract: "Add a rule for the backend's Get Retention Message endpoint: which subscribers, and the message, plan or offer to show.", arguments: BackendOptions.databaseArguments + [
        .option("--message", "UUID", "the uploaded message to show", required: true),
        .option("--product", "PRODUCT_ID", "only subscribers of this product"),
        .option("--min-days", "N", "only customers subscribed N days or more"),
        .option("--max-days", "N", "only customers subscribed N days or fewer"),
        .option("--trial", "yes|no", "only customers in a free trial (yes) or not in one (no)"),
        .option("--switch-to", "PRODUCT_ID", "suggest this plan of the group (a switch-plan message)"),
        .option("--offer", "OFFER_ID", "make this promotional offer of the subscriber's product (backend serve signs it with --offer-key)"),
        .option("--position", "N", "where the rule is tried (lower first; after the others by default)"),
        .option("--name", "TEXT", "what to call the message on the dashboard and in the figures (its header, say)"),
    ])

    var database: String
    var rule: RetentionRule
    var position: Int?

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        database = try BackendDatabase.url(parsing: &arguments)
        let message = try arguments.requiredValue("--message")
        guard UUID(uuidString: message) != nil else { throw ValidationError("--message must be a message's UUID, not \"\(message.prefix(64))\"") }
        let product = try arguments.value("--product")
        let minimum = try arguments.value("--min-days", expected: "a whole number of days") { Int($0).flatMap { $0 >= 0 ? $0 : nil } }
        let maximum = try arguments.value("--max-days", expected: "a whole number of days") { Int($0).flatMap { $0 >= 0 ? $0 : nil } }
        let trial = try arguments.value("--trial", expected: "yes or no") { ["yes": true, "no": false][$0] }
        let alternate = try arguments.value("--switch-to")
        let offer = try arguments.value("--offer")
        if alternate != nil, offer != nil { throw ValidationError("a rule suggests a plan (--switch-to) or makes an offer (--offer), not both") }
        position = try arguments.value("--position", expected: "a whole number") { Int($0) }
        let name = try arguments.value("--name").map { $0.trimmingCharacters(in: .whitespaces) }
        if let name, name.isEmpty || name.count > 200 || name.contains(where: \.isNewline) {
            throw ValidationError("--name is one line of 1 to 200 characters")
        }
        if let minimum, let maximum, minimum > maximum { throw ValidationError("--min-days (\(minimum)) is more than --max-days (\(maximum))") }
        rule = RetentionRule(id: UUID().uuidString.lowercased(), position: 0, productID: product, minimumDays: minimum, maximumDays: maximum, inTrial: trial,
                             kind: alternate != nil ? .switchPlan : offer != nil ? .promotionalOffer : .message, messageIdentifier: message.lowercased(),
                             alternateProductID: alternate, offerIdentifier: offer, messageName: name)
    }

    func run(console: Console) async throws {
        let storage = try await BackendDatabase.open(database, console: console)
        var rule = self.rule
        do throws(BackendError) {
            if let position {
                rule.position = position
            } else {
                rule.position = (try await storage.retentionRules().map(\.position).max() ?? 0) + 1
            }
            try await storage.addRetentionRule(rule)
        } catch { throw CommandFailure(error.description) }
        console.print("added rule \(rule.id) at position \(rule.position)")
    }
}

/// `storekit backend retention-rule list`: the rules in the order they are tried, and what the
/// messages they showed led to.
struct BackendRetentionRuleListCommand: BackendDatabaseCommand {
    static let declaration = CommandDeclaration("backend retention-rule list", group: .backend, abstract: "List the backend's retention rules in the order they are tried, and each message's figures: shown, kept, switched, redeemed, cancelled.", arguments: BackendOptions.databaseArguments)

    var database: String

    func run(storage: any BackendStorage, console: Console) async throws {
        let rules: [RetentionRule]
        let figures: [RetentionFigure]
        do {
            rules = try await storage.retentionRules()
            figures = try await storage.retentionFigures()
        } catch { throw CommandFailure(error.description) }
        if rules.isEmpty { console.print("no retention rules; add one with storekit backend retention-rule add") }
        for rule in rules {
            var conditions: [String] = []
            if let product = rule.productID { conditions.append("product \(product)") }
            if let minimum = rule.minimumDays { conditions.append("≥ \(minimum) days") }
            if let maximum = rule.maximumDays { conditions.append("≤ \(maximum) days") }
            if let trial = rule.inTrial { conditions.append(trial ? "in a free trial" : "not in a free trial") }
            let shows = switch rule.kind {
            case .message: "message \(rule.messageIdentifier)"
            case .switchPlan: "message \(rule.messageIdentifier), switch to \(rule.alternateProductID ?? "?")"
            case .promotionalOffer: "message \(rule.messageIdentifier), offer \(rule.offerIdentifier ?? "?")"
            }
            console.print("\(rule.position)  \(rule.id)  \(conditions.isEmpty ? "everyone" : conditions.joined(separator: ", ")) → \(shows)")
        }
        for figure in figures {
            console.print("message \(figure.messageIdentifier)\(figure.messageName.map { " (\($0))" } ?? ""): shown \(figure.shown), kept \(figure.kept), switched \(figure.switched), redeemed \(figure.redeemed), cancelled \(figure.cancelled)")
        }
    }
}

/// `storekit backend retention-rule remove`.
struct BackendRetentionRuleRemoveCommand: Command {
    static let declaration = CommandDeclaration("backend retention-rule remove", group: .backend, abstract: "Remove a retention rule by the id backend retention-rule list shows.", arguments: BackendOptions.databaseArguments + [
        .positional("ID", "the rule's id"),
    ])

    var database: String
    var id: String

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        database = try BackendDatabase.url(parsing: &arguments)
        id = try arguments.positional("ID").lowercased()
    }

    func run(console: Console) async throws {
        let storage = try await BackendDatabase.open(database, console: console)
        let removed: Bool
        do { removed = try await storage.removeRetentionRule(id: id) } catch { throw CommandFailure(error.description) }
        guard removed else { throw CommandFailure("no retention rule \(id); backend retention-rule list shows them") }
        console.print("removed rule \(id)")
    }
}
