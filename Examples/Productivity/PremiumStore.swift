import Foundation
import OpenStoreKit

/// The productivity app's store: one lifetime premium unlock, kept in step with the App Store.
@MainActor
final class PremiumStore {
    static let premiumID = PremiumServer.premiumID

    /// What the app shows on its upgrade screen.
    enum Status: Equatable {
        case free
        case waitingForApproval
        case premium(since: Date)
        case purchaseFailed(String)
    }

    private(set) var status: Status = .free
    private var product: Product?
    private var listener: Task<Void, Never>?
    /// The app's server, told about every purchase before the app finishes it.
    private let server: PremiumServer

    init(server: PremiumServer) {
        self.server = server
    }

    func start() async throws {
        product = try await Product.products(for: [Self.premiumID]).first
        listener = Task { [weak self] in
            for await result in Transaction.updates {
                if case .verified(let transaction) = result, await self?.reportToServer(transaction) == true { await transaction.finish() }
                await self?.refresh()
            }
        }
        await refresh()
    }

    func stop() {
        listener?.cancel()
    }

    func buyPremium() async {
        guard let product else { return }
        do {
            switch try await product.purchase() {
            case .success(.verified(let transaction)):
                // The server records the purchase first; only then is it finished (a crash in between
                // leaves it unfinished, and it comes back at the next launch).
                guard await reportToServer(transaction) else {
                    status = .purchaseFailed("the server did not accept the purchase")
                    return
                }
                await transaction.finish()
                await refresh()
            case .success(.unverified(_, let error)):
                status = .purchaseFailed("the purchase could not be verified (\(error))")
            case .pending:
                status = .waitingForApproval
            case .userCancelled:
                break
            @unknown default:
                break
            }
        } catch {
            status = .purchaseFailed("\(error)")
        }
    }

    /// Premium is on exactly while a verified, unrevoked entitlement exists.
    func refresh() async {
        for await result in Transaction.currentEntitlements(for: Self.premiumID) {
            if case .verified(let transaction) = result, transaction.revocationDate == nil {
                status = .premium(since: transaction.purchaseDate)
                return
            }
        }
        if status != .waitingForApproval { status = .free }
    }

    /// Sends a purchase's signed form to the server, which checks it itself (revocations need no record).
    private func reportToServer(_ transaction: Transaction) async -> Bool {
        if transaction.revocationDate != nil { return true }
        return await server.recordPurchase(jwsRepresentation: transaction.jwsRepresentation)
    }

    /// Called when a parent declined: back to the upgrade offer.
    func approvalDeclined() {
        status = .free
    }
}
