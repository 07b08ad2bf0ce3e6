// Tests written against the test kit use the store's control vocabulary (`SimulatedFailure`,
// `FailableAPI`, `StoredNotification`, …) without importing the engine themselves.
@_exported import AppStoreSimulator
// The local store tests drive, and its controls' errors (`SKTestError`) and transactions.
@_exported import LocalAppStore
// The in-process transport and the admin API's bodies, which sessions hand out and tests read.
@_exported import SimulatorConnection

/// The test kit's name for a ``LocalStore``: a local App Store with the controls of Xcode's
/// `SKTestSession`, as tests read (`let session = try TestSession(contentsOf: shopFile)`).
public typealias TestSession = LocalStore
