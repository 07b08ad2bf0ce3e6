// A local store's controls speak the engine's vocabulary (`SimulatedFailure`, `FailableAPI`,
// `PurchaseOffer`, `StoredNotification`, …), so code that drives one names them without importing
// the engine itself.
@_exported import AppStoreSimulator
