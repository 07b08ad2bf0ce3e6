/// The StoreKit APIs a test can make fail, as `SKTestSession.setSimulatedError(_:forAPI:)` names them.
public enum FailableAPI: String, Hashable, Sendable, Codable, CaseIterable {
    case loadProducts, purchase, verification, appStoreSync, subscriptionStatus, appTransaction
    case manageSubscriptions, refundRequest, offerCodeRedeem

    /// The name Xcode writes in a `.storekit` file's `_storeKitErrors`.
    public var configurationName: String {
        switch self {
        case .loadProducts: return "Load Products"
        case .purchase: return "Purchase"
        case .verification: return "Verification"
        case .appStoreSync: return "App Store Sync"
        case .subscriptionStatus: return "Subscription Status"
        case .appTransaction: return "App Transaction"
        case .manageSubscriptions: return "Manage Subscriptions Sheet"
        case .refundRequest: return "Refund Request Sheet"
        case .offerCodeRedeem: return "Offer Code Redeem Sheet"
        }
    }

    public init?(configurationName: String) {
        guard let api = Self.allCases.first(where: { $0.configurationName == configurationName }) else { return nil }
        self = api
    }
}

/// A failure a StoreKit API is made to throw, in the families of `SKTestFailures`.
public enum SimulatedFailure: Hashable, Sendable, Codable, CustomStringConvertible {
    /// A `StoreKitError`; every API accepts these.
    case generic(StoreKitErrorCode)
    /// A `Product.PurchaseError`; only for `.purchase`.
    case purchase(PurchaseErrorCode)
    /// A `VerificationResult.VerificationError`; only for `.verification`.
    case verification(VerificationErrorCode)
    /// A `Transaction.RefundRequestError`; only for `.refundRequest`.
    case refundRequest(RefundRequestErrorCode)

    /// Whether `api` can throw this failure.
    public func applies(to api: FailableAPI) -> Bool {
        switch self {
        case .generic: return api != .verification
        case .purchase: return api == .purchase
        case .verification: return api == .verification
        case .refundRequest: return api == .refundRequest
        }
    }

    /// The error the API throws.
    public func error(for api: FailableAPI) -> AppStoreError {
        let message = "simulated failure of \(api.rawValue)"
        switch self {
        case .generic(let code): return .storeKit(code, message)
        case .purchase(let code): return .purchase(code, message)
        case .verification(let code): return .verification(code, message)
        case .refundRequest(let code): return .refundRequest(code, message)
        }
    }

    /// Reads Xcode's `current` entry: `{"index": N, "type": "generic" | "purchase" | "verification" | "refundRequest"}`,
    /// where the index is the case's position in StoreKit's declaration.
    public init?(configurationType type: String, index: Int) {
        func pick<T: CaseIterable>(_ type: T.Type) -> T? {
            let all = Array(T.allCases)
            return all.indices.contains(index) ? all[index] : nil
        }
        switch type {
        case "generic": guard let code = pick(StoreKitErrorCode.self) else { return nil }; self = .generic(code)
        case "purchase": guard let code = pick(PurchaseErrorCode.self) else { return nil }; self = .purchase(code)
        case "verification": guard let code = pick(VerificationErrorCode.self) else { return nil }; self = .verification(code)
        case "refundRequest": guard let code = pick(RefundRequestErrorCode.self) else { return nil }; self = .refundRequest(code)
        default: return nil
        }
    }

    /// Parses `generic.networkError`, `purchase.productUnavailable`, … as the command line writes them.
    public init?(text: String) {
        let parts = text.split(separator: ".", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { return nil }
        switch parts[0] {
        case "generic": guard let code = StoreKitErrorCode(rawValue: parts[1]) else { return nil }; self = .generic(code)
        case "purchase": guard let code = PurchaseErrorCode(rawValue: parts[1]) else { return nil }; self = .purchase(code)
        case "verification": guard let code = VerificationErrorCode(rawValue: parts[1]) else { return nil }; self = .verification(code)
        case "refundRequest": guard let code = RefundRequestErrorCode(rawValue: parts[1]) else { return nil }; self = .refundRequest(code)
        default: return nil
        }
    }

    public var description: String {
        switch self {
        case .generic(let code): return "generic.\(code.rawValue)"
        case .purchase(let code): return "purchase.\(code.rawValue)"
        case .verification(let code): return "verification.\(code.rawValue)"
        case .refundRequest(let code): return "refundRequest.\(code.rawValue)"
        }
    }
}
