// The module StoreKit code imports where Apple's StoreKit does not exist (Linux, Windows, Android):
// `import StoreKit` brings OpenStoreKit's StoreKit-shaped API and, as on Apple platforms, Foundation,
// so app code compiles with no change at all, qualified names (`StoreKit.Transaction`) included.
// On Apple platforms this module is not built; code that wants OpenStoreKit there imports it by name.
@_exported import Foundation
@_exported import OpenStoreKit
