import Foundation

/// The four kinds of App Store signed data.
public enum SignedDataKind: String, CaseIterable, Sendable {
    case transaction
    case renewalInfo = "renewal"
    case notification
    case appTransaction = "app-transaction"

    /// Guesses the kind from the payload's fields, without verifying anything.
    ///
    /// Notifications have `notificationType`, app transactions `receiptType`, transactions
    /// `transactionId`; renewal info has none of those but `originalTransactionId` or `autoRenewStatus`.
    public static func detect(payload: Data) -> SignedDataKind? {
        guard let object = (try? JSONSerialization.jsonObject(with: payload)) as? [String: Any] else { return nil }
        if object["notificationType"] != nil { return .notification }
        if object["receiptType"] != nil { return .appTransaction }
        if object["transactionId"] != nil { return .transaction }
        if object["autoRenewStatus"] != nil || object["autoRenewProductId"] != nil || object["originalTransactionId"] != nil {
            return .renewalInfo
        }
        return nil
    }
}
