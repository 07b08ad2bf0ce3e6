import Foundation

/// The `JWS_OR_FILE` argument: a compact JWS given inline, a file holding one, or `-` for standard input.
enum SignedDataInput {
    /// The JWS text, or a failure naming what is wrong with the argument.
    static func read(_ argument: String, console: Console) async throws(CommandFailure) -> String {
        let data: Data
        let source: String
        if argument == "-" {
            data = await console.readStandardInput()
            source = "standard input"
        } else if FileManager.default.fileExists(atPath: argument) {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory), !isDirectory.boolValue, let contents = FileManager.default.contents(atPath: argument) else {
                throw CommandFailure("cannot read \(argument): it is a directory or unreadable")
            }
            data = contents
            source = argument
        } else if looksLikeCompactJWS(argument) {
            return argument
        } else {
            throw CommandFailure("\(argument) is neither a file nor a compact JWS")
        }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { throw CommandFailure("\(source) is empty") }
        return text
    }

    private static func looksLikeCompactJWS(_ text: String) -> Bool {
        text.utf8.filter { $0 == UInt8(ascii: ".") }.count == 2
            && text.utf8.allSatisfy { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_")
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0)
                || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) }
    }
}

/// Pretty JSON for people: sorted keys, no escaped slashes.
package enum PrettyJSON {
    package static func string(fromJSON data: Data) throws(CommandFailure) -> String {
        do {
            let object = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            return try string(from: object)
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw CommandFailure("not JSON: \(error.localizedDescription)")
        }
    }

    package static func string(from object: Any) throws(CommandFailure) -> String {
        do {
            let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes, .fragmentsAllowed])
            return String(decoding: data, as: UTF8.self)
        } catch {
            throw CommandFailure("cannot format JSON: \(error.localizedDescription)")
        }
    }
}
