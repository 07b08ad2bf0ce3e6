import AppStoreModels
import AppStoreSimulator
import Foundation

/// An exclusive advisory lock on a file (`flock`), held by one process at a time and released by the
/// kernel when the process ends, however it ends.
final class FileLock: LifecycleLease {
    private let descriptor: Int32
    let path: String

    /// Opens (creating, private to the owner) the lock file.
    init(path: String) throws(AppStoreError) {
        self.path = path
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .storage(.failed("cannot open the lock file \(path): \(String(cString: strerror(errno)))")) }
    }

    deinit { close(descriptor) }

    /// Takes the lock; without `wait`, returns false at once when another holder has it.
    func lock(wait: Bool) throws(AppStoreError) -> Bool {
        while flock(descriptor, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0 {
            if errno == EINTR { continue }
            if errno == EWOULDBLOCK { return false }
            throw .storage(.failed("cannot lock \(path): \(String(cString: strerror(errno)))"))
        }
        return true
    }

    func unlock() {
        flock(descriptor, LOCK_UN)
    }

    func release() { unlock() }
}
