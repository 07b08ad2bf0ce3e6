// The module SwiftUI code imports where Apple's SwiftUI does not exist (Linux, Windows, Android),
// holding only what store code uses outside views: `@AppStorage`, `Binding`, and `EnvironmentValues`
// with `@Environment` (`purchase`, `openURL`, the store views' settings). It draws nothing: there are
// no views, modifiers or layout here, and nothing in it claims to behave as a view would. It
// re-exports Combine (this package's, where Apple's does not exist), OpenStoreKit and Foundation, as
// `import SwiftUI` brings Combine and Foundation on Apple platforms. On Apple platforms this module is
// not built and Apple's is used.
@_exported import Combine
@_exported import Foundation
@_exported import OpenStoreKit
