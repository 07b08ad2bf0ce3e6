// The part of UIKit that StoreKit's scene-taking calls name, where Apple's UIKit does not exist
// (Linux): `UIScene`, `UIWindowScene`, `UIViewController` and the application's connected scenes, so
// store code that writes `AppStore.showManageSubscriptions(in: scene)` compiles unchanged. There is
// nothing to draw on here: the one scene stands for the app's screen on its device, and StoreKit's
// sheets are what the test controls queue for them. On Apple platforms this module is not built.
@_exported import Foundation

/// An object that takes part in the app's responder chain.
@MainActor
open class UIResponder: NSObject {
    public override init() {
        super.init()
    }
}

/// A part of the app's interface.
@MainActor
open class UIScene: UIResponder {
    /// The scene's state: the app's one scene is always in the foreground.
    public enum ActivationState: Int, Sendable {
        case unattached = -1
        case foregroundActive = 0
        case foregroundInactive = 1
        case background = 2
    }

    open var activationState: ActivationState { .foregroundActive }
    open var title: String!
}

/// A scene with windows: the app's screen.
@MainActor
open class UIWindowScene: UIScene {}

/// Manages a part of the interface; StoreKit presents its sheets over one.
@MainActor
open class UIViewController: UIResponder {}

/// The running app.
@MainActor
open class UIApplication: UIResponder {
    /// The app.
    public static let shared = UIApplication()

    private let screen = UIWindowScene()

    /// The app's scenes: one, its screen.
    open var connectedScenes: Set<UIScene> { [screen] }
}
