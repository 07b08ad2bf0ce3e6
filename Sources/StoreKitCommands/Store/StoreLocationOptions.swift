import AppStoreSimulatorSQL
import Foundation

/// Where `store create` and `serve` find the store: a folder (`DIR`), or a PostgreSQL database that
/// several servers share (`--database postgres://…`, `--database-file FILE` with the URL on its first
/// line, or `STOREKIT_STORE_DATABASE`), as the backend's commands take theirs.
enum StoreLocationOptions {
    static func arguments(folderHelp: String) -> [ArgumentDeclaration] {
        [.optionalPositional("DIR", folderHelp),
         .option("--database", "URL", "a PostgreSQL database instead of a folder: postgres://USER@HOST:PORT/DB (or STOREKIT_STORE_DATABASE)"),
         .option("--database-file", "FILE", "the database URL on the first line of a file only its owner can read, instead of --database")]
    }

    /// The folder, or the database; exactly one.
    static func location(parsing arguments: inout ArgumentScanner) throws(ValidationError) -> StoreLocation {
        let url: String?
        if let file = try arguments.value("--database-file") {
            url = try BackendDatabase.url(inFile: file)
        } else {
            url = try arguments.value("--database")
            if let url { try BackendDatabase.refusePassword(in: url, given: "--database", environment: "STOREKIT_STORE_DATABASE", databaseFile: true) }
        }
        let folder = arguments.nextWord()
        if let folder {
            try BackendDatabase.refusePassword(in: folder, given: "store's", environment: "STOREKIT_STORE_DATABASE", databaseFile: true)
            guard url == nil else { throw ValidationError("name the store once: a folder DIR or --database URL, not both") }
            return StoreLocation(folder)
        }
        guard let url = url ?? ProcessInfo.processInfo.environment["STOREKIT_STORE_DATABASE"] else {
            throw ValidationError("missing DIR (the store's folder), or --database URL for a store in PostgreSQL")
        }
        guard StoreDatabase.isDatabaseURL(url) else { throw ValidationError("--database must be a postgres:// URL, not \(url)") }
        return .database(url)
    }
}
