import AppStoreModels
import AppStoreSimulator
import Foundation
import HTTPService
import SimulatorConnection

/// The admin API's cancellation flow (docs/admin-api.md): a customer opens a subscription's
/// cancellation page, then answers it; the Transaction Manager lists the attempts.
enum CancellationRoutes {
    struct StartBody: Decodable { var locale: String? }
    struct AnswerBody: Decodable { var outcome: RetentionOfferAttempt.Outcome }
    struct ReviewBody: Decodable { var state: RetentionContentState }

    static func register(on router: inout Router, flow: CancellationFlow) {
        let store = flow.store
        router.on("POST", "/v1/admin/subscriptions/{id}/cancellation") { request, context in
            let id = try DeviceRoutes.transactionID(context["id"])
            let body = request.body.isEmpty ? StartBody(locale: nil) : try APIResponse.decode(StartBody.self, from: request)
            let attempt = try await flow.start(originalTransactionID: id, locale: body.locale ?? "en-US")
            return try APIResponse.json(try await CancellationPageBody.make(attempt, store: store))
        }
        router.on("POST", "/v1/admin/cancellations/{attempt}") { request, context in
            let body = try APIResponse.decode(AnswerBody.self, from: request)
            let attempt = try await flow.answer(context["attempt"], outcome: body.outcome)
            return try APIResponse.json(try await CancellationPageBody.make(attempt, store: store))
        }
        router.on("GET", "/v1/admin/cancellations") { request, _ in
            let subscription = try request.queryValue("subscription").map { (text) throws -> UInt64 in try DeviceRoutes.transactionID(text) }
            return try APIResponse.json(["attempts": try await store.cancellationAttempts(originalTransactionID: subscription)])
        }
        // App Store review of an uploaded image or message: APPROVED, REJECTED or PENDING again.
        router.on("POST", "/v1/admin/retention/{id}/review") { request, context in
            let body = try APIResponse.decode(ReviewBody.self, from: request)
            try await store.reviewRetentionContent(context["id"], state: body.state)
            return try APIResponse.json(["identifier": context["id"].lowercased(), "state": body.state.rawValue])
        }
        router.on("GET", "/v1/admin/retention/images/{id}") { _, context in
            guard let png = try await store.retentionImageData(context["id"]) else { throw APIError.notFound("no image \(context["id"])") }
            return HTTPResponse(status: 200, headers: [("Content-Type", "image/png")], body: png)
        }
    }
}
