// The module StoreKit code imports where Apple's StoreKit does not exist (Linux, Windows, Android):
// `import StoreKit` brings OpenStoreKit's StoreKit-shaped API and what Apple's StoreKit brings with
// it: Foundation, and Combine's `ObservableObject` and `@Published` (this package's Combine, where
// Apple's does not exist), so a store manager that imports only StoreKit compiles with no change at
// all, qualified names (`StoreKit.Transaction`) included. On Apple platforms this module is not built;
// code that wants OpenStoreKit there imports it by name.
@_exported import Combine
@_exported import Foundation
@_exported import OpenStoreKit
