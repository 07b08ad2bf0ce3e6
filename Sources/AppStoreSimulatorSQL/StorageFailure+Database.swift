import AppStoreModels
import SQLDatabase

extension StorageFailure {
    /// A database's failure while doing `what`, with the reason its flags give (`fallback` when they
    /// name none) and the database's error kept underneath.
    static func database(_ error: DatabaseError, _ what: String, default fallback: Reason = .failed) -> StorageFailure {
        let reason: Reason
        if error.isUnavailable { reason = .unavailable }
        else if error.isStorageFull { reason = .full }
        else if error.isReadOnly { reason = .readOnly }
        else if error.isDamaged { reason = .damaged }
        else { reason = fallback }
        return StorageFailure(reason, "\(what): \(error.message)", underlying: error)
    }
}
