import AppStoreSigning
import AppStoreSimulator
import Foundation

/// `storekit ca init`: makes a local certificate authority shaped like Apple's signing chain.
struct CertificateAuthorityInit: Command {
    static let declaration = CommandDeclaration("ca init", group: .signing, abstract: "Make a local certificate authority (root, intermediate, signing leaf) in DIR.", arguments: [
        .positional("DIR", "the folder to make it in"),
    ])

    var directory: String

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        directory = try arguments.positional("DIR")
    }

    func run(console: Console) async throws {
        let authority = try CertificateAuthority.make()
        try authority.save(to: URL(fileURLWithPath: directory))
        console.print("created a certificate authority in \(directory)")
        console.print("root: \(authority.rootCertificate.subject)")
        console.print("root SHA-256: \(authority.rootCertificate.sha256Fingerprint)")
    }
}

/// `storekit ca export`: prints the root certificate servers must trust.
struct CertificateAuthorityExport: Command {
    static let declaration = CommandDeclaration("ca export", group: .signing, abstract: "Print the root certificate of DIR's authority (DER, or PEM with --pem).", arguments: [
        .positional("DIR", "the authority's folder, or a store's"),
        .flag("--pem", "print PEM instead of DER"),
    ])

    var directory: String
    var pem: Bool

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        pem = arguments.flag("--pem")
        directory = try arguments.positional("DIR")
    }

    func run(console: Console) async throws {
        let authority = try CertificateAuthorityLocation.load(directory)
        if pem {
            console.write(Data(authority.rootCertificate.pemRepresentation.utf8))
        } else {
            console.write(authority.rootCertificate.derRepresentation)
        }
    }
}

/// `storekit ca sign`: signs a JSON payload into an App Store-shaped JWS.
struct CertificateAuthoritySign: Command {
    static let declaration = CommandDeclaration("ca sign", group: .signing, abstract: "Sign the JSON object in PAYLOAD.json as a JWS with DIR's authority.", arguments: [
        .positional("DIR", "the authority's folder, or a store's"),
        .positional("PAYLOAD.json", "the payload to sign"),
    ])

    var directory: String
    var payloadPath: String

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        directory = try arguments.positional("DIR")
        payloadPath = try arguments.positional("PAYLOAD.json")
    }

    func run(console: Console) async throws {
        let authority = try CertificateAuthorityLocation.load(directory)
        let data: Data
        if payloadPath == "-" {
            data = await console.readStandardInput()
        } else {
            guard let contents = FileManager.default.contents(atPath: payloadPath) else {
                throw CommandFailure("cannot read \(payloadPath)")
            }
            data = contents
        }
        guard (try? JSONSerialization.jsonObject(with: data)) is [String: Any] else {
            throw CommandFailure("\(payloadPath) is not a JSON object")
        }
        // The payload is signed byte for byte as given (minus surrounding whitespace).
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        console.print(try authority.makeSigner().sign(payload: Data(text.utf8)))
    }
}

enum CertificateAuthorityLocation {
    /// Loads the authority in `path`, or in `path/ca` when `path` is a store directory.
    static func load(_ path: String) throws -> CertificateAuthority {
        let url = URL(fileURLWithPath: path)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CommandFailure("\(path) does not exist or is not a directory")
        }
        let nested = url.appendingPathComponent("ca")
        if FileManager.default.fileExists(atPath: nested.appendingPathComponent(CertificateAuthority.FileName.signingKey).path) {
            return try CertificateAuthority.load(from: nested)
        }
        return try CertificateAuthority.load(from: url)
    }
}

/// `storekit ca revoke`: the store's OCSP responder reports a certificate of its authority revoked.
struct CertificateAuthorityRevoke: Command {
    static let declaration = CommandDeclaration("ca revoke", group: .signing, abstract: "Make a store's OCSP responder (storekit serve) report its intermediate or signing certificate revoked.", arguments: [
        .positional("DIR", "the store's folder"),
        .positional("CERTIFICATE", "intermediate or leaf"),
    ])

    var directory: String
    var member: CertificateAuthority.Member

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        directory = try arguments.positional("DIR")
        let text = try arguments.positional("CERTIFICATE", missing: "intermediate or leaf")
        guard let member = CertificateAuthority.Member(rawValue: text) else { throw ValidationError("revoke intermediate or leaf, not \(text)") }
        self.member = member
    }

    func run(console: Console) async throws {
        try await StoreAccess.open(directory).revokeCertificate(member)
        console.print("revoked the \(member == .leaf ? "signing" : "intermediate") certificate; verifiers with online checks now refuse what the store signs")
    }
}
