import AppStoreModels
import Foundation
import SQLDatabase

extension SQLBackendStorage {
    static let retentionSchema = """
        CREATE TABLE IF NOT EXISTS retention_rules (rule_id TEXT PRIMARY KEY, position BIGINT NOT NULL, product_id TEXT, min_days BIGINT,
                                                    max_days BIGINT, in_trial BIGINT, kind TEXT NOT NULL, message_id TEXT NOT NULL,
                                                    alternate_product_id TEXT);
        CREATE TABLE IF NOT EXISTS retention_requests (request_id TEXT PRIMARY KEY, original_transaction_id TEXT NOT NULL,
                                                       product_id TEXT NOT NULL, requested_ms BIGINT NOT NULL, rule_id TEXT, message_id TEXT);
        CREATE INDEX IF NOT EXISTS retention_requests_by_original ON retention_requests(original_transaction_id);
        """

    public func addRetentionRule(_ rule: RetentionRule) async throws(BackendError) {
        try rule.validate()
        try await write { (database) throws(BackendError) in
            try database.run("""
                INSERT INTO retention_rules (rule_id, position, product_id, min_days, max_days, in_trial, kind, message_id, alternate_product_id, offer_id,
                                             message_name)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
                """, [.text(rule.id), .integer(Int64(rule.position)), .optionalText(rule.productID), .optionalInteger(rule.minimumDays.map(Int64.init)),
                      .optionalInteger(rule.maximumDays.map(Int64.init)), .optionalInteger(rule.inTrial.map { $0 ? 1 : 0 }), .text(rule.kind.rawValue),
                      .text(rule.messageIdentifier.lowercased()), .optionalText(rule.alternateProductID), .optionalText(rule.offerIdentifier),
                      .optionalText(rule.messageName)])
        }
    }

    public func retentionRules() async throws(BackendError) -> [RetentionRule] {
        try await read { (database) throws(BackendError) in
            try database.query("""
                SELECT rule_id, position, product_id, min_days, max_days, in_trial, kind, message_id, alternate_product_id, offer_id, message_name
                FROM retention_rules ORDER BY position, rule_id
                """, []).map { (row) throws(BackendError) in
                RetentionRule(id: try row.column("rule_id"), position: try row.column("position"), productID: try row.column("product_id"),
                              minimumDays: try row.column("min_days"), maximumDays: try row.column("max_days"),
                              inTrial: (try row.column("in_trial", as: Int64?.self)).map { $0 == 1 },
                              kind: RetentionRule.Kind(rawValue: try row.column("kind")) ?? .message, messageIdentifier: try row.column("message_id"),
                              alternateProductID: try row.column("alternate_product_id"), offerIdentifier: try row.column("offer_id"),
                              messageName: try row.column("message_name"))
            }
        }
    }

    public func removeRetentionRule(id: String) async throws(BackendError) -> Bool {
        try await write { (database) throws(BackendError) in
            !(try database.query("DELETE FROM retention_rules WHERE rule_id = $1 RETURNING rule_id", [.text(id)]).isEmpty)
        }
    }

    @discardableResult
    public func recordRetentionRequest(_ record: RetentionRequestRecord) async throws(BackendError) -> Bool {
        try await write { (database) throws(BackendError) -> Bool in
            // One statement decides: a replay's identifier is already there, and returns no row.
            !(try database.query("""
                INSERT INTO retention_requests (request_id, original_transaction_id, product_id, requested_ms, rule_id, message_id)
                VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (request_id) DO NOTHING RETURNING request_id
                """, [.text(record.requestIdentifier), .text(record.originalTransactionID), .text(record.productID), .integer(record.requestedDate),
                      .optionalText(record.ruleID), .optionalText(record.messageIdentifier)])).isEmpty
        }
    }

    public func hasRetentionRequest(_ requestIdentifier: String) async throws(BackendError) -> Bool {
        try await read { (database) throws(BackendError) -> Bool in
            !(try database.query("SELECT 1 FROM retention_requests WHERE request_id = $1", [.text(requestIdentifier)])).isEmpty
        }
    }

    public func retentionFigures() async throws(BackendError) -> [RetentionFigure] {
        // Each answered request with the first notification about its subscription that followed it
        // and says what the customer did.
        let rows = try await read { (database) throws(BackendError) in
            try database.readTransaction { () throws(BackendError) -> [(message: String, outcome: String?)] in
                try database.query("""
                    SELECT r.message_id AS message_id,
                           (SELECT n.type || '/' || COALESCE(n.subtype, '') FROM notifications n
                            WHERE n.original_transaction_id = r.original_transaction_id AND n.signed_ms >= r.requested_ms
                              AND ((n.type = 'DID_CHANGE_RENEWAL_STATUS' AND n.subtype = 'AUTO_RENEW_DISABLED') OR n.type = 'OFFER_REDEEMED'
                                   OR n.type = 'DID_CHANGE_RENEWAL_PREF')
                            ORDER BY n.signed_ms, n.uuid LIMIT 1) AS outcome
                    FROM retention_requests r WHERE r.message_id IS NOT NULL
                    """, []).map { (row) throws(BackendError) in (try row.column("message_id"), try row.column("outcome")) }
            }
        }
        // Each message by its name: the first rule's that names it, else what the first rule showing it shows.
        var names: [String: String] = [:], named: Set<String> = []
        for rule in try await retentionRules() where !named.contains(rule.messageIdentifier) {
            if let name = rule.messageName, !name.isEmpty {
                names[rule.messageIdentifier] = name
                named.insert(rule.messageIdentifier)
            } else if names[rule.messageIdentifier] == nil {
                names[rule.messageIdentifier] = rule.summary
            }
        }
        var figures: [String: RetentionFigure] = [:]
        for row in rows {
            let message = row.message
            var figure = figures[message] ?? RetentionFigure(messageIdentifier: message, messageName: names[message], shown: 0, kept: 0, switched: 0,
                                                             redeemed: 0, cancelled: 0)
            figure.shown += 1
            switch row.outcome?.split(separator: "/").first.map(String.init) {
            case "DID_CHANGE_RENEWAL_STATUS"?: figure.cancelled += 1
            case "OFFER_REDEEMED"?: figure.redeemed += 1
            case "DID_CHANGE_RENEWAL_PREF"?: figure.switched += 1
            default: figure.kept += 1
            }
            figures[message] = figure
        }
        return figures.values.sorted { ($0.shown, $1.messageIdentifier) > ($1.shown, $0.messageIdentifier) }
    }
}
