import AppStoreModels
import AppStoreSigning
import Foundation

/// `storekit verify`: verifies App Store signed data as Apple's libraries do and prints its payload.
///
/// Apple's libraries check nothing but the format of `Xcode` and `LocalTesting` data. A local store
/// signs with a real chain, so this command checks local data against the given roots too, fully;
/// `--unchecked-local` does what Apple's libraries do and says on standard error that nothing was
/// checked.
struct Verify: Command {
    static let declaration = CommandDeclaration("verify", group: .signing, abstract: "Verify App Store signed data and print its payload as JSON.", arguments: [
        .positional("JWS_OR_FILE", "the JWS, or a file holding it"),
        .repeating("--root", "CERT", "a root certificate to trust", required: true),
        .option("--bundle-id", "ID", "the app it must be for", required: true),
        .option("--environment", "Production|Sandbox|Xcode|LocalTesting", "the environment it must be from", required: true),
        .option("--app-apple-id", "N", "the app's Apple ID (Production)"),
        .option("--kind", "transaction|renewal|notification|app-transaction", "what it is (default: found from the payload)"),
        .flag("--online", "check revocation with the certificates' OCSP responders"),
        .flag("--unchecked-local", "accept Xcode and LocalTesting data (signed by no Apple chain)"),
    ])

    var roots: [String]
    var bundleId: String
    var environment: Environment
    var appAppleId: Int64?
    var kind: SignedDataKind?
    var online: Bool
    var uncheckedLocal: Bool
    var input: String

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        roots = try arguments.values("--root")
        guard !roots.isEmpty else { throw ValidationError("missing --root: give at least one trusted root certificate") }
        bundleId = try arguments.requiredValue("--bundle-id")
        let environmentName = try arguments.requiredValue("--environment")
        environment = Environment(rawValue: environmentName)
        guard environment.isKnown else {
            throw ValidationError("--environment must be one of \(Environment.knownValues.map(\.rawValue).joined(separator: ", ")), not \"\(environmentName)\"")
        }
        appAppleId = try arguments.value("--app-apple-id", expected: "a number") { Int64($0) }
        kind = try arguments.value("--kind", expected: "transaction, renewal, notification or app-transaction") { SignedDataKind(rawValue: $0) }
        online = arguments.flag("--online")
        uncheckedLocal = arguments.flag("--unchecked-local")
        guard !uncheckedLocal || Self.isLocal(environment) else {
            throw ValidationError("--unchecked-local applies to Xcode and LocalTesting data only; \(environment.rawValue) data is always checked")
        }
        input = try arguments.positional("JWS_OR_FILE")
    }

    func run(console: Console) async throws {
        var certificates: [Certificate] = []
        for path in roots {
            do { certificates.append(try Certificate(contentsOf: URL(fileURLWithPath: path))) } catch { throw CommandFailure("\(error)") }
        }
        let verifier: SignedDataVerifier
        var options = SignedDataVerifier.Options()
        options.verifiesLocalEnvironments = !uncheckedLocal
        do {
            verifier = try SignedDataVerifier(rootCertificates: certificates, bundleId: bundleId, appAppleId: appAppleId,
                                              environment: environment, enableOnlineChecks: online, options: options)
        } catch {
            throw ValidationError("\(error)")
        }
        let jws = try await SignedDataInput.read(input, console: console)
        let kind = try self.kind ?? detectKind(jws)
        switch kind {
        case .transaction: _ = try await verifier.verifyAndDecodeTransaction(jws)
        case .renewalInfo: _ = try await verifier.verifyAndDecodeRenewalInfo(jws)
        case .notification: _ = try await verifier.verifyAndDecodeNotification(jws)
        case .appTransaction: _ = try await verifier.verifyAndDecodeAppTransaction(jws)
        }
        if uncheckedLocal {
            console.printError("warning: nothing but the format was checked: \(environment.rawValue) data is not signed by Apple, and Apple's libraries accept it unchecked; drop --unchecked-local to check it against --root")
        }
        // Verified: print the payload exactly as signed, fields Apple added since included.
        console.print(try PrettyJSON.string(fromJSON: CompactJWS(jws).payloadData))
    }

    static func isLocal(_ environment: Environment) -> Bool { environment == .xcode || environment == .localTesting }

    private func detectKind(_ jws: String) throws(VerificationError) -> SignedDataKind {
        let compact: CompactJWS
        do { compact = try CompactJWS(jws) } catch { throw VerificationError(.invalidJWTFormat, error.description) }
        guard let kind = SignedDataKind.detect(payload: compact.payloadData) else {
            throw VerificationError(.invalidJWTFormat, "the payload is not a transaction, renewal info, notification or app transaction; pass --kind")
        }
        return kind
    }
}
