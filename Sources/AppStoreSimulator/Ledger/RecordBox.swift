/// A part of a ledger record that nearly no record has (an imported App Store payload, a
/// subscription's billing commitment), kept behind a reference so the record that holds it stays
/// small.
///
/// Apple's payloads are large (a transaction's is 561 bytes in place, a renewal info's 433) and
/// nearly every record has none; stored in place, they made every copy of a transaction or a
/// subscription record, of which playing a renewal makes many, two to three times as long. Encoded
/// and compared as the value itself, so records' JSON and equality are unchanged.
struct RecordBox<Payload: Hashable & Codable & Sendable>: Hashable, Codable, Sendable {
    private final class Storage: Sendable {
        let payload: Payload

        init(_ payload: Payload) {
            self.payload = payload
        }
    }

    private let storage: Storage

    var payload: Payload { storage.payload }

    init(_ payload: Payload) {
        storage = Storage(payload)
    }

    init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(Payload.self))
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(payload)
    }

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.storage === rhs.storage || lhs.payload == rhs.payload
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(payload)
    }
}
