// Corpus (Swift 6): the store manager of a Swift 6 app, main-actor isolated, an `ObservableObject` with
// `@Published` state in a file that imports only StoreKit. Purchases switch on the result; a verified
// transaction is delivered, then finished.
import StoreKit

@MainActor
final class ProStore: ObservableObject {
    @Published private(set) var purchasedIDs: Set<String> = []
    @Published private(set) var lastError: String?
    private var listener: Task<Void, Never>?

    init() {
        listener = Task { [weak self] in
            for await result in Transaction.updates {
                if case .verified(let transaction) = result {
                    await transaction.finish()
                    await self?.reload()
                }
            }
        }
    }

    deinit {
        listener?.cancel()
    }

    func buy(_ product: Product) async -> Bool {
        do {
            switch try await product.purchase() {
            case .success(.verified(let transaction)):
                await transaction.finish()
                await reload()
                return true
            case .success(.unverified(_, let error)):
                lastError = "unverified: \(error)"
                return false
            case .pending, .userCancelled:
                return false
            @unknown default:
                return false
            }
        } catch {
            lastError = "\(error)"
            return false
        }
    }

    func reload() async {
        purchasedIDs = await AccessCheck.activeProductIDs()
    }
}
