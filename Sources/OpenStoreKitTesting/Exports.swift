// Tests written against the test kit use the store's control vocabulary (`SimulatedFailure`,
// `FailableAPI`, `StoredNotification`, …) without importing the engine themselves.
@_exported import AppStoreSimulator
