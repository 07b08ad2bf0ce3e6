import Foundation
#if canImport(CMainBundle)
import CMainBundle
#endif
import Synchronization

/// `Bundle.main.bundleIdentifier` for apps run against a local store.
///
/// On Linux an executable has no Info.plist, so Foundation answers `nil` where store code (and
/// libraries that force-unwrap it) expects the app's bundle identifier. When an app connects to a
/// store (``StoreClient/connect(to:device:)``) and its process has no Info.plist, the main bundle
/// takes the store's bundle identifier: the app is the one the store sells for. A process with an
/// Info.plist keeps its own. On Apple platforms nothing changes.
enum MainBundleIdentity {
    private static let adopted = Mutex<String?>(nil)

    /// Gives the main bundle `identifier` if it has no info of its own; the first store connected wins.
    static func adopt(_ identifier: String) {
        #if canImport(CMainBundle)
        adopted.withLock { adopted in
            guard adopted == nil, Bundle.main.bundleIdentifier == nil, !identifier.isEmpty else { return }
            if osk_main_bundle_adopt_identifier(identifier) != 0 { adopted = identifier }
        }
        #endif
    }
}
