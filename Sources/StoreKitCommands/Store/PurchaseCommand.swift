import AppStoreModels
import AppStoreSimulator
import Foundation

/// `storekit purchase`: buys a product as an app on a device would.
struct PurchaseCommand: Command {
    static let declaration = CommandDeclaration("purchase", group: .purchases, abstract: "Buy a product on a device of an account; print the signed transaction.", arguments: [
        .positional("DIR", "the store's folder"),
        .positional("PRODUCT_ID", "the product to buy"),
        .option("--account", "NAME", "the buyer (default: default)"),
        .option("--device", "NAME", "the device the app runs on (default: default)"),
        .flag("--outside-app", "buy outside the app: the transaction reaches devices through their updates"),
        .option("--quantity", "N", "how many of a consumable (default 1)"),
        .option("--app-account-token", "UUID", "the app's own identifier for the customer"),
        .option("--offer", "OFFER", "introductory, promotional:ID, code:REFERENCE or winback:ID"),
        .option("--signature", "SIG", "a promotional offer's signature: a JWS, or a legacy one with --key-id, --nonce and --timestamp"),
        .option("--key-id", "ID", "a legacy signature's key"),
        .option("--nonce", "UUID", "a legacy signature's nonce"),
        .option("--timestamp", "MS", "a legacy signature's time, in milliseconds since 1970"),
        .option("--purchase-date", "DATE", "back-date a subscription purchase"),
        .option("--renewal", "until-now|cancel-immediately", "what a back-dated subscription did since (default until-now)"),
        .flag("--json", "print JSON"),
    ], discussion: "--device and --outside-app exclude each other.")

    var directory: String
    var request: PurchaseRequest
    var json: Bool

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        let account = try arguments.value("--account") ?? "default"
        let outsideApp = arguments.flag("--outside-app")
        let device = try arguments.value("--device")
        if outsideApp, device != nil { throw ValidationError("--device and --outside-app exclude each other") }
        let quantity = try arguments.value("--quantity", expected: "a whole number") { Int($0) } ?? 1
        let token = try arguments.value("--app-account-token", expected: "a UUID") { UUID(uuidString: $0) }
        let signature = try arguments.value("--signature")
        let keyID = try arguments.value("--key-id")
        let nonce = try arguments.value("--nonce", expected: "a UUID") { UUID(uuidString: $0) }
        let timestamp = try arguments.value("--timestamp", expected: "milliseconds since 1970, 0 or more") { Int64($0).flatMap { $0 >= 0 ? $0 : nil } }
        if signature == nil, keyID != nil || nonce != nil || timestamp != nil {
            throw ValidationError("--key-id, --nonce and --timestamp go with a legacy promotional-offer --signature")
        }
        let offer = try arguments.value("--offer").map { (text) throws(ValidationError) -> PurchaseOffer in
            try Self.offer(text, signature: signature, keyID: keyID, nonce: nonce, timestamp: timestamp)
        }
        let purchaseDate = try arguments.value("--purchase-date", expected: "a date such as 2026-01-01") { StoreAccess.date($0) }
        let renewal = try arguments.value("--renewal", expected: "until-now or cancel-immediately") { text -> RenewalBehavior? in
            text == "until-now" ? .renewUntilNow : text == "cancel-immediately" ? .cancelImmediately : nil
        } ?? .renewUntilNow
        json = arguments.flag("--json")
        directory = try arguments.positional("DIR")
        let productID = try arguments.positional("PRODUCT_ID")
        request = PurchaseRequest(productID: productID, account: account, device: outsideApp ? nil : (device ?? "default"),
                                  quantity: quantity, appAccountToken: token, offer: offer, purchaseDate: purchaseDate,
                                  renewalBehavior: renewal)
    }

    static func offer(_ text: String, signature: String?, keyID: String?, nonce: UUID?, timestamp: Int64?) throws(ValidationError) -> PurchaseOffer {
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        switch (parts.first, parts.count) {
        case ("introductory", 1): return .introductory
        case ("code", 2): return .code(referenceName: parts[1])
        case ("winback", 2): return .winBack(id: parts[1])
        case ("promotional", 2):
            guard let signature else { return .promotional(id: parts[1], signature: nil) }
            if signature.split(separator: ".").count == 3 { return .promotional(id: parts[1], signature: .jws(signature)) }
            guard let keyID, let nonce, let timestamp else {
                throw ValidationError("a legacy promotional-offer --signature needs --key-id, --nonce and --timestamp")
            }
            return .promotional(id: parts[1], signature: .legacy(keyID: keyID, nonce: nonce, timestamp: timestamp, signature: signature))
        default:
            throw ValidationError("--offer must be introductory, promotional:ID, code:REFERENCE or winback:ID, not \"\(text)\"")
        }
    }

    func run(console: Console) async throws {
        let store = try await StoreAccess.open(directory)
        let outcome: PurchaseOutcome
        if request.device == nil {
            let transaction = try await store.buyProduct(request.productID, account: request.account, quantity: request.quantity,
                                                         appAccountToken: request.appAccountToken, offer: request.offer,
                                                         purchaseDate: request.purchaseDate, renewalBehavior: request.renewalBehavior)
            outcome = .success(try await store.transaction(transaction.id))
        } else {
            outcome = try await store.purchase(request)
        }
        switch outcome {
        case .success(let signed):
            if json {
                console.print(try PrettyJSON.string(from: ["result": "success", "orderId": signed.transaction.orderID,
                                                           "transaction": StoreAccess.payloadObject(signed.jws), "jws": signed.jws]))
            } else {
                console.print("success: \(StoreAccess.line(signed.transaction))")
            }
        case .pending(let id, let reason):
            if json {
                console.print(try PrettyJSON.string(from: ["result": "pending", "transactionId": String(id), "reason": reason.rawValue]))
            } else {
                console.print("pending (\(reason == .askToBuy ? "waiting for Ask to Buy approval" : "interrupted; resolve it")): transaction #\(id)")
            }
        case .userCancelled:
            console.print(json ? try PrettyJSON.string(from: ["result": "userCancelled"]) : "userCancelled")
        }
    }
}
