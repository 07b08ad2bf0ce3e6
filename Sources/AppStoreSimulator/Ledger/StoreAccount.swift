import AppStoreModels
import Foundation

/// An App Store account (an Apple Account) that buys in the local store.
public struct StoreAccount: Hashable, Sendable, Codable, Identifiable {
    /// The account's name, unique in the store.
    public var name: String
    /// The account's own storefront; `nil` follows the store's storefront setting.
    public var storefront: String?
    /// Every purchase needs a parent's approval (a child in a family with Ask to Buy on).
    public var askToBuy: Bool
    /// The Family Sharing group the account belongs to.
    public var familyGroup: String?
    /// The identifier of the account's download of the app.
    public var appTransactionID: String
    /// When the account first got the app.
    public var originalPurchaseDate: Date
    /// The app version the account first got.
    public var originalApplicationVersion: String
    /// Stored only when restricted (`false`), so records written before it existed read as allowed.
    private var inAppPurchasesAllowed: Bool?
    /// The app account token the app gives this customer's purchases (`Product.PurchaseOption.appAccountToken`):
    /// the storefront's purchases carry it, so a backend that keys customers by it links them (`nil`:
    /// purchases carry none).
    public var appAccountToken: UUID?

    /// Whether the account may buy in-app purchases (Screen Time can restrict them).
    public var purchasesAllowed: Bool {
        get { inAppPurchasesAllowed ?? true }
        set { inAppPurchasesAllowed = newValue ? nil : false }
    }

    public var id: String { name }

    public init(name: String, storefront: String? = nil, askToBuy: Bool = false, familyGroup: String? = nil,
                appTransactionID: String, originalPurchaseDate: Date, originalApplicationVersion: String) {
        self.name = name
        self.storefront = storefront
        self.askToBuy = askToBuy
        self.familyGroup = familyGroup
        self.appTransactionID = appTransactionID
        self.originalPurchaseDate = originalPurchaseDate
        self.originalApplicationVersion = originalApplicationVersion
    }
}

/// A device signed in to an account; it receives transactions and its own update feed.
public struct StoreDevice: Hashable, Sendable, Codable, Identifiable {
    public var name: String
    public var account: String
    /// The per-device identifier `deviceVerification` hashes (`AppStore.deviceVerificationID`).
    public var deviceVerificationID: UUID
    /// How many times the app launched on the device.
    public var launchCount: Int
    /// The app's requests for a review on this device (`AppStore.requestReview`,
    /// `SKStoreReviewController.requestReview()`), oldest first, the last ``ReviewRequest/kept`` of them.
    public var reviewRequests: [ReviewRequest]?
    /// The app's order and visibility of its promoted in-app purchases on this device
    /// (`Product.PromotionInfo`); `nil` keeps App Store Connect's (the catalog's order, every one shown).
    public var promotedProducts: [PromotedProduct]?

    public var id: String { name }

    public init(name: String, account: String, deviceVerificationID: UUID, launchCount: Int = 0) {
        self.name = name
        self.account = account
        self.deviceVerificationID = deviceVerificationID
        self.launchCount = launchCount
    }
}

/// A promoted in-app purchase as an app orders and shows it on a device (`Product.PromotionInfo`).
public struct PromotedProduct: Hashable, Sendable, Codable {
    /// Whether the App Store shows the promotion on this device.
    public enum Visibility: String, Hashable, Sendable, Codable {
        /// As App Store Connect says.
        case appStoreConnectDefault
        case visible
        case hidden
    }

    public var productID: String
    public var visibility: Visibility

    public init(productID: String, visibility: Visibility) {
        self.productID = productID
        self.visibility = visibility
    }
}

/// The app asked the customer for a review, and whether the prompt showed.
///
/// As on Apple's devices, a Production app's prompt shows at most three times in 365 days (the
/// store's clock); in the Xcode and Sandbox environments (development builds) it shows every time.
public struct ReviewRequest: Hashable, Sendable, Codable {
    public var date: Date
    /// Whether the review prompt appeared.
    public var shown: Bool

    /// How many requests a device keeps.
    public static let kept = 20
    /// How many prompts a Production app shows in 365 days.
    public static let promptsPerYear = 3

    public init(date: Date, shown: Bool) {
        self.date = date
        self.shown = shown
    }
}

/// Who the store is: the app it sells for and the environment it signs as.
public struct StoreIdentity: Hashable, Sendable, Codable {
    public var bundleId: String
    public var environment: AppStoreModels.Environment
    /// The app's Apple ID: in Production and Sandbox notifications and app transactions; Xcode has none.
    public var appAppleId: Int64?
    /// The current app version (`CFBundleVersion`).
    public var applicationVersion: String
    /// The app version new accounts get first.
    public var originalApplicationVersion: String

    public init(bundleId: String, environment: AppStoreModels.Environment = .xcode, appAppleId: Int64? = nil,
                applicationVersion: String = "1", originalApplicationVersion: String = "1") {
        self.bundleId = bundleId
        self.environment = environment
        self.appAppleId = appAppleId
        self.applicationVersion = applicationVersion
        self.originalApplicationVersion = originalApplicationVersion
    }
}
