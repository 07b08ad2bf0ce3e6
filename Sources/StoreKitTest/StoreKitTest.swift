// The module StoreKit tests import where Apple's StoreKitTest does not exist (Linux, Windows,
// Android): `import StoreKitTest` brings Xcode's `SKTestSession` and what goes with it
// (`SKTestTransaction`, `SKTestError`, `SKTestFailures`, the failable APIs), over this package's local
// App Store, and StoreKit itself, so a test written for Xcode compiles and runs with no change.
// On Apple platforms this module is not built and Apple's is used.
@_exported import StoreKit
@_exported import struct LocalAppStore.SKTestError
@_exported import let LocalAppStore.SKTestErrorDomain
@_exported import struct LocalAppStore.SKTestTransaction

import LocalAppStore

/// Matches an error against a code, so `catch SKTestError.noTransactionFound` works as with Xcode's.
/// (LocalAppStore's own matcher is a member of the code type, which a scoped re-export does not
/// carry; this one is generic, so where both are visible the member wins and neither is ambiguous.)
public func ~= <Failure: Error>(code: SKTestError.Code, error: Failure) -> Bool {
    (error as? SKTestError)?.code == code
}
