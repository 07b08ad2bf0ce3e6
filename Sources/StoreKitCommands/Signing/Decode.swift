import AppStoreSigning
import Foundation

/// `storekit decode`: shows a JWS's header and payload without verifying anything.
struct Decode: Command {
    static let declaration = CommandDeclaration("decode", group: .signing, abstract: "Print a JWS's header and payload as JSON, unverified.", arguments: [
        .positional("JWS_OR_FILE", "the JWS, or a file holding it"),
    ])

    var input: String

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        input = try arguments.positional("JWS_OR_FILE")
    }

    func run(console: Console) async throws {
        let jws = try await SignedDataInput.read(input, console: console)
        let compact: CompactJWS
        do { compact = try CompactJWS(jws) } catch { throw CommandFailure("not a compact JWS: \(error.description)") }
        func object(_ data: Data, _ part: String) throws(CommandFailure) -> Any {
            guard let value = try? JSONSerialization.jsonObject(with: data) else { throw CommandFailure("the \(part) is not JSON") }
            return value
        }
        let output: [String: Any] = [
            "verified": false,
            "warning": "decoded only: nothing here has been verified; use `storekit verify` before trusting it",
            "header": try object(compact.headerData, "header"),
            "payload": try object(compact.payloadData, "payload"),
        ]
        console.print(try PrettyJSON.string(from: output))
    }
}
