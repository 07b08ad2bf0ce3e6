// The module SwiftUI code imports where Apple's SwiftUI does not exist (Linux, Windows, Android),
// holding only what store code and view models use outside views: `@AppStorage`, `Binding`,
// `EnvironmentValues` with `@Environment` (`purchase`, `openURL`, the store views' settings),
// `@ObservedObject`, `@StateObject`, `withAnimation`, `LocalizedStringKey` and `DynamicTypeSize`.
// It draws nothing: there are no views, modifiers or layout here, `withAnimation` changes state at once,
// and nothing in it claims to behave as a view would. It re-exports Combine (this package's, where
// Apple's does not exist), Observation (`@Observable`), OpenStoreKit and Foundation, as `import SwiftUI`
// brings Combine, Observation and Foundation on Apple platforms. On Apple platforms this module is not
// built and Apple's is used.
@_exported import Combine
@_exported import Foundation
@_exported import Observation
@_exported import OpenStoreKit
