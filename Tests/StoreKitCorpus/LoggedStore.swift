// Corpus: a store manager that logs through the unified log, as most apps do: `Logger` with privacy
// and formats, `os_log` in the older style, and a signposted interval around the purchase. Imports
// StoreKit and os.log.
import StoreKit
import os.log

enum LoggedStore {
    static let logger = Logger(subsystem: "com.example.shop", category: "Store")
    static let legacyLog = OSLog(subsystem: "com.example.shop", category: "Legacy")
    static let signposter = OSSignposter(subsystem: "com.example.shop", category: .pointsOfInterest)
    static let purchases = OSAllocatedUnfairLock(initialState: [String]())

    /// Buys `product`, logging each step; the verified transaction, finished.
    static func buy(_ product: Product, account: UUID) async -> Transaction? {
        let interval = signposter.beginInterval("purchase", id: signposter.makeSignpostID(), "\(product.id, privacy: .public)")
        defer { signposter.endInterval("purchase", interval) }
        logger.info("buying \(product.id, privacy: .public) for \(product.displayPrice, privacy: .public), account \(account, privacy: .private(mask: .hash))")
        do {
            switch try await product.purchase(options: [.appAccountToken(account)]) {
            case .success(.verified(let transaction)):
                logger.notice("bought \(transaction.productID, privacy: .public): transaction \(transaction.id), quantity \(transaction.purchasedQuantity, format: .decimal(minDigits: 2))")
                purchases.withLock { $0.append(transaction.productID) }
                await transaction.finish()
                return transaction
            case .success(.unverified(let transaction, let error)):
                logger.fault("unverified \(transaction.productID, privacy: .public): \(error.localizedDescription, privacy: .public)")
                return nil
            case .pending:
                os_log("purchase of %{public}@ is pending", log: legacyLog, type: .info, product.id)
                return nil
            case .userCancelled:
                logger.debug("cancelled by \(account)")
                return nil
            @unknown default:
                return nil
            }
        } catch {
            logger.error("purchase failed: \(error.localizedDescription, privacy: .public); \(String(describing: error))")
            os_log(.error, log: legacyLog, "purchase of %@ failed", product.id)
            return nil
        }
    }

    /// Logs the price as the paywall shows it, with a fixed precision.
    static func logPrice(_ product: Product) {
        let price = NSDecimalNumber(decimal: product.price).doubleValue
        logger.log(level: .debug, "\(product.id, privacy: .public) costs \(price, format: .fixed(precision: 2), privacy: .public) \(product.subscription != nil)")
    }
}
