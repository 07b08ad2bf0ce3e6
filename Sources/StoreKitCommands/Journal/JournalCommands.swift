import Foundation
import OpenStoreKit

/// `storekit journal show`: what an app's delivery journal records, one entry a line.
struct JournalShowCommand: Command {
    static let declaration = CommandDeclaration("journal show", group: .purchases, abstract: "List the entries of an app's delivery journal (EntitlementCenter's record of what it delivered).", arguments: [
        .positional("FILE", "the journal"),
    ])

    var file: String

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        file = try arguments.positional("FILE")
    }

    func run(console: Console) async throws {
        guard FileManager.default.fileExists(atPath: file) else { throw CommandFailure("\(file) does not exist") }
        let journal = try DeliveryJournal(fileURL: URL(fileURLWithPath: file))
        let lines = journal.entries.map { entry in
            [entry.key, entry.kind.rawValue, entry.productID, "×\(entry.quantity)", entry.source].joined(separator: "  ")
        }
        console.print(lines.isEmpty ? "no entries" : lines.joined(separator: "\n"))
    }
}

/// `storekit journal consume`: uses up a consumable once per key, as `EntitlementCenter.consume` does,
/// printing each key that this call recorded. Keys another process already recorded are skipped.
struct JournalConsumeCommand: Command {
    static let declaration = CommandDeclaration("journal consume", group: .purchases, abstract: "Record consumption of PRODUCT_ID in a delivery journal once per KEY; print the keys this call recorded.", arguments: [
        .positional("FILE", "the journal"),
        .positional("PRODUCT_ID", "the consumable"),
        .remaining("KEY", "the consumption keys"),
    ])

    var file: String
    var productID: String
    var keys: [String]

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        file = try arguments.positional("FILE")
        productID = try arguments.positional("PRODUCT_ID")
        keys = [try arguments.positional("KEY")]
        while let key = arguments.nextWord() { keys.append(key) }
    }

    func run(console: Console) async throws {
        let journal = try DeliveryJournal(fileURL: URL(fileURLWithPath: file))
        for key in keys {
            let entry = DeliveryJournal.Entry(key: "consume:\(key)", kind: .consume, productID: productID,
                                              productType: Product.ProductType.consumable.rawValue, source: "storekit journal")
            if try journal.append(entry) { console.print(key) }
        }
    }
}
