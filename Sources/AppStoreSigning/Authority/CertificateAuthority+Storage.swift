import Foundation

extension CertificateAuthority {
    /// The files an authority directory holds.
    public enum FileName {
        public static let rootCertificate = "root.pem"
        public static let rootKey = "root-key.pem"
        public static let intermediateCertificate = "intermediate.pem"
        public static let intermediateKey = "intermediate-key.pem"
        public static let signingCertificate = "signing.pem"
        public static let signingKey = "signing-key.pem"
    }

    /// Writes the certificates and keys as PEM files into `directory`, creating it if needed.
    ///
    /// The directory is created private to its owner (0700). Keys are created with mode 0600 from their
    /// first byte (never readable by others, even for an instant), written to a temporary name, flushed
    /// and renamed, so a crash never leaves half a key behind; temporary files an interrupted earlier
    /// save left are removed first. Refuses to overwrite an existing authority.
    public func save(to directory: URL) throws(SigningError) {
        let fileManager = FileManager.default
        if fileManager.fileExists(atPath: directory.appendingPathComponent(FileName.signingKey).path) {
            throw SigningError("\(directory.path) already holds a certificate authority")
        }
        do {
            try fileManager.createDirectory(at: directory.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            throw SigningError("cannot create \(directory.deletingLastPathComponent().path): \(error.localizedDescription)")
        }
        if mkdir(directory.path, 0o700) == 0 {
            // A folder made here is private whatever the umask; a folder the caller already had keeps its mode.
            guard chmod(directory.path, 0o700) == 0 else { throw SigningError("cannot make \(directory.path) private: \(String(cString: strerror(errno)))") }
        } else if errno != EEXIST {
            throw SigningError("cannot create \(directory.path): \(String(cString: strerror(errno)))")
        }
        Self.removeTemporaryFilesOfEndedSaves(in: directory)
        let secrets: Set = [FileName.rootKey, FileName.intermediateKey, FileName.signingKey]
        for (name, contents) in try pemFiles() {
            let isSecret = secrets.contains(name)
            let target = directory.appendingPathComponent(name)
            let temporary = directory.appendingPathComponent(".\(name).\(getpid()).tmp")
            try Self.writeNew(temporary.path, Data(contents.utf8), mode: isSecret ? 0o600 : 0o644)
            // rename(2) replaces leftovers of an interrupted earlier save atomically.
            guard rename(temporary.path, target.path) == 0 else {
                unlink(temporary.path)
                throw SigningError("cannot rename \(temporary.path): \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Removes `.NAME.PID.tmp` files that a save killed midway left behind: only this code's own names,
    /// and only those of processes that no longer run (a save running now keeps its files).
    private static func removeTemporaryFilesOfEndedSaves(in directory: URL) {
        let names = [FileName.rootCertificate, FileName.intermediateCertificate, FileName.signingCertificate,
                     FileName.rootKey, FileName.intermediateKey, FileName.signingKey]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] where entry.hasSuffix(".tmp") {
            guard let name = names.first(where: { entry.hasPrefix(".\($0).") }),
                  let pid = pid_t(entry.dropFirst(name.count + 2).dropLast(4)) else { continue }
            if kill(pid, 0) != 0, errno == ESRCH { unlink(directory.appendingPathComponent(entry).path) }
        }
    }

    /// Creates a file that did not exist with `mode` from the start, writes and flushes it.
    private static func writeNew(_ path: String, _ data: Data, mode: mode_t) throws(SigningError) {
        unlink(path)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw SigningError("cannot create \(path): \(String(cString: strerror(errno)))") }
        let written = data.withUnsafeBytes { bytes in write(descriptor, bytes.baseAddress, bytes.count) }
        let flushed = fsync(descriptor)
        close(descriptor)
        guard written == data.count, flushed == 0 else {
            unlink(path)
            throw SigningError("cannot write \(path)")
        }
    }

    /// The authority's certificates and keys as PEM texts, by file name, in the order they are saved
    /// (the signing key, whose presence marks a complete authority, last).
    public func pemFiles() throws(SigningError) -> [(name: String, contents: String)] {
        [(FileName.rootCertificate, rootCertificate.pemRepresentation),
         (FileName.intermediateCertificate, intermediateCertificate.pemRepresentation),
         (FileName.signingCertificate, signingCertificate.pemRepresentation),
         (FileName.rootKey, try rootKey.pemRepresentation),
         (FileName.intermediateKey, try intermediateKey.pemRepresentation),
         (FileName.signingKey, try signingKey.pemRepresentation)]
    }

    /// Reads an authority written by ``save(to:)``.
    public static func load(from directory: URL) throws(SigningError) -> CertificateAuthority {
        try load(source: directory.path) { (name) throws(SigningError) -> String in
            let url = directory.appendingPathComponent(name)
            guard let data = FileManager.default.contents(atPath: url.path) else {
                throw SigningError("\(url.path) is missing: \(directory.path) is not a certificate authority directory")
            }
            return String(decoding: data, as: UTF8.self)
        }
    }

    /// Reads an authority from the PEM texts ``pemFiles()`` gave, kept elsewhere than in files (a
    /// store in PostgreSQL keeps them in its database); `source` names where, for messages.
    public static func load(pemFiles: [String: String], source: String) throws(SigningError) -> CertificateAuthority {
        try load(source: source) { (name) throws(SigningError) -> String in
            guard let text = pemFiles[name] else { throw SigningError("\(source) holds no \(name): it is not a certificate authority") }
            return text
        }
    }

    private static func load(source: String, text: (String) throws(SigningError) -> String) throws(SigningError) -> CertificateAuthority {
        let directory = URL(fileURLWithPath: source)
        func certificate(_ name: String) throws(SigningError) -> Certificate {
            do { return try Certificate(pemRepresentation: try text(name)) } catch {
                throw SigningError("\(directory.appendingPathComponent(name).path): \(error.message)")
            }
        }
        func authorityKey(_ name: String) throws(SigningError) -> AuthorityKey {
            do { return try AuthorityKey(pemRepresentation: try text(name)) } catch {
                throw SigningError("\(directory.appendingPathComponent(name).path): \(error.message)")
            }
        }
        let root = try certificate(FileName.rootCertificate)
        let intermediate = try certificate(FileName.intermediateCertificate)
        let signingKey: P256PrivateKey
        do { signingKey = try P256PrivateKey(pemRepresentation: try text(FileName.signingKey)) } catch {
            throw SigningError("\(directory.appendingPathComponent(FileName.signingKey).path): \(error.message)")
        }
        let rootName = root.handle.commonName ?? ""
        let authority = CertificateAuthority(
            rootCertificate: root, intermediateCertificate: intermediate, signingCertificate: try certificate(FileName.signingCertificate),
            rootKey: try authorityKey(FileName.rootKey), intermediateKey: try authorityKey(FileName.intermediateKey), signingKey: signingKey,
            name: rootName.hasSuffix(" Root CA") ? String(rootName.dropLast(8)) : rootName,
            ocspURL: intermediate.handle.ocspResponderURLs.first)
        let expected = try authority.signingKey.publicKey.derRepresentation
        guard let actual = authority.signingCertificate.p256PublicKey, try actual.derRepresentation == expected else {
            throw SigningError("\(source): the signing key does not match the signing certificate")
        }
        return authority
    }
}
