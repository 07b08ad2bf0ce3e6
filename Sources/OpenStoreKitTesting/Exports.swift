// Tests written against the test kit use the store's control vocabulary (`SimulatedFailure`,
// `FailableAPI`, `StoredNotification`, …) without importing the engine themselves.
@_exported import AppStoreSimulator
// The in-process transport and the admin API's bodies, which sessions hand out and tests read.
@_exported import SimulatorConnection
