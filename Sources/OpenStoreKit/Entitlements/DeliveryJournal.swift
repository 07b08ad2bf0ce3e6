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
        /// The journal file, opened for appending; `nil` in memory.
        var handle: FileHandle?
        /// How many bytes of the file are in `entries`: each read continues from here.
        var readLength: UInt64 = 0
        /// Lines read so far, for error messages.
        var lineCount = 0
    }

    /// Where the journal lives; `nil` in memory.
    public let fileURL: URL?
    private let state: Mutex<State>

    /// Opens (or creates) the journal at `fileURL`.
    ///
    /// Several processes (an app and its extensions, two launches) may open one journal: every append
    /// takes an exclusive lock on the file, reads what others appended since, and writes its line with
    /// `O_APPEND`; readers take a shared lock and never see a torn line.
    ///
    /// - Throws: ``JournalError`` naming the file and line when it cannot be read or a line is damaged.
    public init(fileURL: URL) throws(JournalError) {
        self.fileURL = fileURL
        let descriptor = open(fileURL.path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw JournalError(description: "\(fileURL.path): cannot open the delivery journal: \(String(cString: strerror(errno)))")
        }
        var state = State()
        state.handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        try Self.catchUp(&state, path: fileURL.path, exclusive: false)
        self.state = Mutex(state)
    }

    /// A journal that lives in memory only (for previews and tests of app logic).
    public init() {
        self.fileURL = nil
        self.state = Mutex(State())
    }

    /// Whether an entry with this key was recorded (by this process or another).
    public func contains(_ key: String) -> Bool {
        state.withLock { state in
            try? Self.catchUp(&state, path: fileURL?.path ?? "memory", exclusive: false)
            return state.keys.contains(key)
        }
    }

    /// Every entry, in the order recorded (by this process or another).
    public var entries: [Entry] {
        state.withLock { state in
            try? Self.catchUp(&state, path: fileURL?.path ?? "memory", exclusive: false)
            return state.entries
        }
    }

    /// Records an entry durably, unless its key is already recorded.
    ///
    /// - Returns: `true` if the entry is new and now on disk; `false` if the key was already there,
    ///   recorded by this process or another.
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
            guard let handle = state.handle else {
                guard state.keys.insert(entry.key).inserted else { return false }
                state.entries.append(entry)
                return true
            }
            try Self.lock(handle, exclusive: true, path: path)
            defer { flock(handle.fileDescriptor, LOCK_UN) }
            // Under the exclusive lock the file is complete but for a line torn by a crash, which
            // catching up cuts off (it was never acknowledged).
            try Self.catchUp(&state, path: path, exclusive: true, locked: true)
            guard !state.keys.contains(entry.key) else { return false }
            do {
                try handle.write(contentsOf: line)
                try handle.synchronize()
            } catch {
                try? handle.truncate(atOffset: state.readLength)
                throw JournalError(description: "\(path): cannot record \(entry.key): \(error.localizedDescription)")
            }
            state.readLength += UInt64(line.count)
            state.lineCount += 1
            state.keys.insert(entry.key)
            state.entries.append(entry)
            return true
        }
    }

    private static func lock(_ handle: FileHandle, exclusive: Bool, path: String) throws(JournalError) {
        while flock(handle.fileDescriptor, exclusive ? LOCK_EX : LOCK_SH) != 0 {
            guard errno == EINTR else { throw JournalError(description: "\(path): cannot lock the delivery journal: \(String(cString: strerror(errno)))") }
        }
    }

    /// Reads the lines appended since the last read, under a lock (taken here unless `locked`).
    /// A last line without its newline is a write in progress or torn by a crash: readers leave it,
    /// the exclusive holder cuts it off.
    private static func catchUp(_ state: inout State, path: String, exclusive: Bool, locked: Bool = false) throws(JournalError) {
        guard let handle = state.handle else { return }
        if !locked { try lock(handle, exclusive: exclusive, path: path) }
        defer { if !locked { flock(handle.fileDescriptor, LOCK_UN) } }
        let data: Data
        do {
            try handle.seek(toOffset: state.readLength)
            data = try handle.readToEnd() ?? Data()
        } catch {
            throw JournalError(description: "\(path): cannot read the delivery journal: \(error.localizedDescription)")
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        var start = data.startIndex
        while let newline = data[start...].firstIndex(of: UInt8(ascii: "\n")) {
            state.lineCount += 1
            let line = data[start..<newline]
            // Blank lines (an editor's trailing newline) carry nothing.
            if line.contains(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") && $0 != UInt8(ascii: "\r") }) {
                do {
                    let entry = try decoder.decode(Entry.self, from: line)
                    if state.keys.insert(entry.key).inserted { state.entries.append(entry) }
                } catch {
                    state.lineCount -= 1
                    throw JournalError(description: "\(path):\(state.lineCount + 1): damaged journal entry: \(error)")
                }
            }
            start = data.index(after: newline)
            state.readLength += UInt64(data.distance(from: line.startIndex, to: start))
        }
        if exclusive, start < data.endIndex {
            do {
                try handle.truncate(atOffset: state.readLength)
                try handle.synchronize()
            } catch {
                throw JournalError(description: "\(path): cannot cut off a torn journal entry: \(error.localizedDescription)")
            }
        }
    }
}
