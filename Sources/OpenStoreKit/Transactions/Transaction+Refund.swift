import Foundation

extension Transaction {
    /// How a refund request sheet ended.
    public enum RefundRequestStatus: Hashable, Sendable {
        /// The request was submitted; the App Store decides, and a refund arrives through `Transaction.updates`.
        case success
        /// The customer dismissed the sheet.
        case userCancelled
    }

    /// Why a refund request could not be made.
    public enum RefundRequestError: Error, Hashable, Sendable {
        /// The transaction already has a refund request.
        case duplicateRequest
        /// The request failed.
        case failed
    }

    /// Asks the App Store to refund this transaction, as the in-app refund sheet does.
    ///
    /// The local App Store approves requests at once: the revoked transaction arrives through
    /// `Transaction.updates`.
    public func beginRefundRequest() async throws -> RefundRequestStatus {
        try await (client ?? StoreClient.active).beginRefundRequest(for: id)
    }

    /// Asks the App Store to refund a transaction, by identifier.
    public static func beginRefundRequest(for transactionID: UInt64) async throws -> RefundRequestStatus {
        try await StoreClient.active.beginRefundRequest(for: transactionID)
    }
}

extension StoreClient {
    /// `Transaction.beginRefundRequest(for:)` from this device.
    public func beginRefundRequest(for transactionID: UInt64) async throws -> Transaction.RefundRequestStatus {
        do {
            try await storeKitCall { try await transport.requestRefund(transactionID: transactionID, device: device) }
            return .success
        } catch StoreKitError.userCancelled {
            return .userCancelled
        }
    }
}
