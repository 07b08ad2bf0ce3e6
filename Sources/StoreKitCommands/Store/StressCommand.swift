import AppStoreSimulator
import Foundation

/// `storekit stress purchase`: buys in a loop and prints each transaction identifier once its
/// purchase is durable. Crash tests kill it at random and check that every printed identifier is in
/// the ledger exactly once.
struct StressPurchaseCommand: Command {
    static let declaration = CommandDeclaration("stress purchase", group: .purchases, abstract: "Buy PRODUCT_ID in a loop, printing each transaction ID (completed or pending) once it is durable (for crash and concurrency tests).", arguments: [
        .positional("DIR", "the store's folder"),
        .positional("PRODUCT_ID", "the product"),
        .option("--count", "N", "how many (default: until killed)"),
        .option("--account", "NAME", "the buyer (default: default)"),
        .option("--device", "NAME", "the device (default: default)"),
    ])

    var directory: String
    var productID: String
    var count: Int
    var account: String
    var device: String

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        count = try arguments.value("--count", expected: "a number of purchases") { Int($0).flatMap { $0 > 0 ? $0 : nil } } ?? 1_000
        account = try arguments.value("--account") ?? "default"
        device = try arguments.value("--device") ?? "default"
        directory = try arguments.positional("DIR")
        productID = try arguments.positional("PRODUCT_ID")
    }

    func run(console: Console) async throws {
        let store = try await StoreAccess.open(directory)
        let request = PurchaseRequest(productID: productID, account: account, device: device)
        for _ in 0..<count {
            // Printed only after the commit returned: an acknowledged purchase (a pending Ask to Buy or
            // interrupted purchase is acknowledged too: it is in the ledger, waiting).
            switch try await store.purchase(request) {
            case .success(let signed): console.print(String(signed.transaction.id))
            case .pending(let id, _): console.print(String(id))
            case .userCancelled: throw CommandFailure("a purchase was cancelled; stress purchases need the purchase API's simulated error off")
            }
        }
    }
}
