/// Text that came from outside (a header, a token's field, a request's body), made safe to repeat in
/// an error message or a log line: cut short, and every character that could break a line or hide
/// text escaped, so a client can neither forge lines nor make one request cost pages of output.
public enum UntrustedText {
    /// At most `limit` characters of `text` (then `…` and how many more there were), with C0 and C1
    /// controls, DEL, U+2028 and U+2029 escaped as `\u{…}` and backslashes doubled.
    public static func excerpt(_ text: String, limit: Int = 64) -> String {
        var result = ""
        var count = 0
        for scalar in text.unicodeScalars {
            guard count < limit else { break }
            count += 1
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case "\\": result += "\\\\"
            default:
                if needsEscaping(scalar) { result += "\\u{\(String(scalar.value, radix: 16))}" } else { result.unicodeScalars.append(scalar) }
            }
        }
        let total = text.unicodeScalars.count
        return total > limit ? result + "…(\(total - limit) more)" : result
    }

    /// Whether a scalar could break a line or hide text: C0 and C1 controls, DEL, U+2028 and U+2029.
    public static func needsEscaping(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }
}
