import AppStoreSimulator
import Foundation

/// `storekit purchase-intent`: sends a purchase intent to the app on a device.
struct PurchaseIntentCommand: Command {
    static let declaration = CommandDeclaration("purchase-intent", group: .purchases, abstract: "Send a purchase intent to the app on a device (a promoted in-app purchase tapped on the App Store).", arguments: [
        .positional("DIR", "the store's folder"),
        .positional("DEVICE", "the device"),
        .positional("PRODUCT_ID", "the product"),
        .option("--offer", "OFFER_ID", "a promotional or win-back offer to go with it"),
    ])

    var directory: String
    var device: String
    var productID: String
    var offerID: String?

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        offerID = try arguments.value("--offer")
        directory = try arguments.positional("DIR")
        device = try arguments.positional("DEVICE")
        productID = try arguments.positional("PRODUCT_ID")
    }

    func run(console: Console) async throws {
        let store = try await StoreAccess.open(directory)
        try await store.sendPurchaseIntent(productID: productID, offerID: offerID, device: device)
        console.print("sent a purchase intent for \(productID)\(offerID.map { " with offer \($0)" } ?? "") to \(device)")
    }
}

/// `storekit customer-response`: what the customer on a device does the next time the app shows a sheet.
struct CustomerResponseCommand: Command {
    static let declaration = CommandDeclaration("customer-response", group: .purchases, abstract: "Queue what the customer does in the next sheet of a kind the app shows on a device.", arguments: [
        .positional("DIR", "the store's folder"),
        .positional("DEVICE", "the device"),
        .positional("SHEET", "the kind of sheet"),
        .positional("RESPONSE", "what the customer does"),
        .optionalPositional("ARGUMENT", "the response's argument"),
    ], discussion: """
        sheets: \(CustomerSheet.allCases.map(\.rawValue).joined(separator: ", "))
        responses: dismiss; redeem-code NAME (offerCodeRedeem); cancel PRODUCT_ID, change-to PRODUCT_ID (manageSubscriptions);
                   accept, decline (priceIncreaseConsent); update-payment (billingIssue); win-back OFFER_ID (winBackOffer)
        """)

    var directory: String
    var device: String
    var sheet: CustomerSheet
    var response: CustomerResponse

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        directory = try arguments.positional("DIR")
        device = try arguments.positional("DEVICE")
        let sheetName = try arguments.positional("SHEET")
        guard let sheet = CustomerSheet(rawValue: sheetName) else {
            throw ValidationError("SHEET is one of \(CustomerSheet.allCases.map(\.rawValue).joined(separator: ", ")), not \(sheetName)")
        }
        self.sheet = sheet
        let verb = try arguments.positional("RESPONSE")
        switch verb {
        case "dismiss": response = .dismiss
        case "redeem-code": response = .redeemOfferCode(referenceName: try arguments.positional("ARGUMENT", missing: "the offer code's reference NAME"))
        case "cancel": response = .cancelSubscription(productID: try arguments.positional("ARGUMENT", missing: "PRODUCT_ID"))
        case "change-to": response = .changeSubscription(toProductID: try arguments.positional("ARGUMENT", missing: "PRODUCT_ID"))
        case "accept": response = .acceptPriceIncrease
        case "decline": response = .declinePriceIncrease
        case "update-payment": response = .updatePaymentMethod
        case "win-back": response = .redeemWinBackOffer(offerID: try arguments.positional("ARGUMENT", missing: "OFFER_ID"))
        default:
            throw ValidationError("RESPONSE is dismiss, redeem-code, cancel, change-to, accept, decline, update-payment or win-back, not \(verb)")
        }
    }

    func run(console: Console) async throws {
        let store = try await StoreAccess.open(directory)
        try await store.queueCustomerResponse(response, in: sheet, device: device)
        console.print("queued for \(device)'s next \(sheet.rawValue) sheet: \(response)")
    }
}
