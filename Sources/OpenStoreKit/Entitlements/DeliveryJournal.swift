import Foundation
import Synchronization

/// A durable, append-only record of what the app delivered, keyed so each thing happens once.
///
/// Keys are `grant:<transaction id>`, `upgrade:<transaction id>`, `revoke:<transaction id>` and
/// `consume:<caller's key>`. ``append(_:)`` returns only after the entry is on disk (written and
/// fsync'd), so an app that appends before finishing a transaction never loses a delivery and never
/// delivers twice, across launches and crashes. A line torn by a crash mid-write is dropped when the
/// journal is opened (it was never acknowledged); any other damage is an error naming the line.
public final class DeliveryJournal: Sendable {
    /// One delivery, revocation or consumption.
    public struct Entry: Codable, Hashable, Sendable {
        public enum Kind: String, Codable, Hashable, Sendable {
            /// A purchase or renewal was delivered.
            case grant
            /// A subscription was superseded by a higher level in its group.
            case upgrade
            /// A refund or revocation took the purchase back.
            case revoke
            /// The app used up some of a consumable.
            case consume
        }

        public var key: String
        public var kind: Kind
        public var productID: String
        /// The product type's raw value (`Consumable`, `Non-Consumable`, `Auto-Renewable`, `Non-Renewable`).
        public var productType: String
        public var transactionID: UInt64?
        public var originalTransactionID: UInt64?
        public var subscriptionGroupID: String?
        /// `PURCHASED` or `FAMILY_SHARED`.
        public var ownership: String?
        public var quantity: Int
        public var purchaseDate: Date?
        public var expirationDate: Date?
        public var revocationDate: Date?
        public var revocationReason: Int?
        /// Where the transaction came from: `purchase`, `updates`, `unfinished`, `currentEntitlements`, or the app's own words.
        public var source: String

        public init(key: String, kind: Kind, productID: String, productType: String, transactionID: UInt64? = nil,
                    originalTransactionID: UInt64? = nil, subscriptionGroupID: String? = nil, ownership: String? = nil, quantity: Int = 1,
                    purchaseDate: Date? = nil, expirationDate: Date? = nil, revocationDate: Date? = nil, revocationReason: Int? = nil,
                    source: String) {
            self.key = key
            self.kind = kind
            self.productID = productID
            self.productType = productType
            self.transactionID = transactionID
            self.originalTransactionID = originalTransactionID
            self.subscriptionGroupID = subscriptionGroupID
            self.ownership = ownership
            self.quantity = quantity
            self.purchaseDate = purchaseDate
            self.expirationDate = expirationDate
            self.revocationDate = revocationDate
            self.revocationReason = revocationReason
            self.source = source
        }
    }

    /// The journal's file could not be read or written.
    public struct JournalError: Error, Hashable, Sendable, CustomStringConvertible {
        public var description: String
    }

    private struct State {
        var entries: [Entry] = []
        var keys: Set<String> = []
        var handle: FileHandle?
    }

    /// Where the journal lives; `nil` in memory.
    public let fileURL: URL?
    private let state: Mutex<State>

    /// Opens (or creates) the journal at `fileURL`.
    ///
    /// - Throws: ``JournalError`` naming the file and line when it cannot be read or a line is damaged.
    public init(fileURL: URL) throws(JournalError) {
        self.fileURL = fileURL
        var state = State()
        let manager = FileManager.default
        if !manager.fileExists(atPath: fileURL.path) {
            guard manager.createFile(atPath: fileURL.path, contents: nil) else {
                throw JournalError(description: "\(fileURL.path): cannot create the delivery journal")
            }
        }
        let data: Data
        do { data = try Data(contentsOf: fileURL) } catch {
            throw JournalError(description: "\(fileURL.path): cannot read the delivery journal: \(error.localizedDescription)")
        }
        var validLength = 0
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        var lineNumber = 0
        var start = data.startIndex
        while start < data.endIndex {
            lineNumber += 1
            guard let newline = data[start...].firstIndex(of: UInt8(ascii: "\n")) else { break }  // torn last line
            let line = data[start..<newline]
            do {
                let entry = try decoder.decode(Entry.self, from: line)
                if state.keys.insert(entry.key).inserted { state.entries.append(entry) }
            } catch {
                throw JournalError(description: "\(fileURL.path):\(lineNumber): damaged journal entry: \(error)")
            }
            start = data.index(after: newline)
            validLength = data.distance(from: data.startIndex, to: start)
        }
        do {
            let handle = try FileHandle(forUpdating: fileURL)
            if validLength < data.count {
                try handle.truncate(atOffset: UInt64(validLength))
                try handle.synchronize()
            }
            try handle.seekToEnd()
            state.handle = handle
        } catch {
            throw JournalError(description: "\(fileURL.path): cannot open the delivery journal for writing: \(error.localizedDescription)")
        }
        self.state = Mutex(state)
    }

    /// A journal that lives in memory only (for previews and tests of app logic).
    public init() {
        self.fileURL = nil
        self.state = Mutex(State())
    }

    /// Whether an entry with this key was recorded.
    public func contains(_ key: String) -> Bool {
        state.withLock { $0.keys.contains(key) }
    }

    /// Every entry, in the order recorded.
    public var entries: [Entry] {
        state.withLock { $0.entries }
    }

    /// Records an entry durably, unless its key is already recorded.
    ///
    /// - Returns: `true` if the entry is new and now on disk; `false` if the key was already there.
    /// - Throws: ``JournalError`` when the write fails; nothing is recorded then.
    @discardableResult
    public func append(_ entry: Entry) throws(JournalError) -> Bool {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        let line: Data
        do { line = try encoder.encode(entry) + Data("\n".utf8) } catch {
            throw JournalError(description: "cannot encode journal entry \(entry.key): \(error)")
        }
        let path = fileURL?.path ?? "memory"
        return try state.withLock { (state) throws(JournalError) -> Bool in
            guard !state.keys.contains(entry.key) else { return false }
            if let handle = state.handle {
                do {
                    let offset = try handle.offset()
                    do {
                        try handle.write(contentsOf: line)
                        try handle.synchronize()
                    } catch {
                        try? handle.truncate(atOffset: offset)
                        throw error
                    }
                } catch {
                    throw JournalError(description: "\(path): cannot record \(entry.key): \(error.localizedDescription)")
                }
            }
            state.keys.insert(entry.key)
            state.entries.append(entry)
            return true
        }
    }
}
