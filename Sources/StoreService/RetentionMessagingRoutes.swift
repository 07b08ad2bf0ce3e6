import AppStoreModels
import AppStoreSimulator
import Foundation
import HTTPService

/// The Retention Messaging API, `/inApps/v1/messaging/…`, at Apple's paths with Apple's bodies,
/// limits and error codes, behind the App Store Server API's token check
/// (https://developer.apple.com/documentation/retentionmessaging).
struct RetentionMessagingRoutes {
    let store: SimulatedAppStore
    let performanceTests: RetentionPerformanceTester

    func register(on group: inout RouteGroup) {
        let store = self.store
        let tester = performanceTests
        func on(_ method: String, _ pattern: String, _ responder: @escaping @Sendable (HTTPRequest, RequestContext) async throws -> HTTPResponse) {
            group.on(method, "/v1/messaging" + pattern, query: .lenient, responder)
        }
        let ok = HTTPResponse(status: 200)
        on("PUT", "/image/{imageIdentifier}") { request, context in
            let size = request.queryValue("imageSize").map(RetentionImageSize.init(rawValue:)) ?? .fullSize
            try await store.uploadRetentionImage(context["imageIdentifier"], png: request.body, size: size)
            return ok
        }
        on("DELETE", "/image/{imageIdentifier}") { _, context in
            try await store.deleteRetentionImage(context["imageIdentifier"])
            return ok
        }
        on("GET", "/image/list") { _, _ in try ServerAPIRoutes.json(try await store.retentionImages()) }
        on("PUT", "/message/{messageIdentifier}") { request, context in
            let body = try ServerAPIRoutes.decode(UploadMessageRequestBody.self, request)
            try await store.uploadRetentionMessage(context["messageIdentifier"], body)
            return ok
        }
        on("DELETE", "/message/{messageIdentifier}") { _, context in
            try await store.deleteRetentionMessage(context["messageIdentifier"])
            return ok
        }
        on("GET", "/message/list") { _, _ in try ServerAPIRoutes.json(try await store.retentionMessages()) }
        on("PUT", "/default/{productId}/{locale}") { request, context in
            let body = try ServerAPIRoutes.decode(DefaultConfigurationRequest.self, request)
            try await store.configureDefaultRetentionMessage(productID: context["productId"], locale: context["locale"],
                                                             messageIdentifier: body.messageIdentifier)
            return ok
        }
        on("GET", "/default/{productId}/{locale}") { _, context in
            let identifier = try await store.defaultRetentionMessage(productID: context["productId"], locale: context["locale"])
            return try ServerAPIRoutes.json(DefaultConfigurationRequest(messageIdentifier: identifier))
        }
        on("DELETE", "/default/{productId}/{locale}") { _, context in
            try await store.deleteDefaultRetentionMessage(productID: context["productId"], locale: context["locale"])
            return ok
        }
        on("PUT", "/realtime/url") { request, _ in
            try await store.configureRetentionRealtimeURL(try ServerAPIRoutes.decode(RealtimeUrlRequest.self, request).realtimeURL)
            return ok
        }
        on("GET", "/realtime/url") { _, _ in
            guard let url = try await store.retentionRealtimeURL() else { throw RetentionMessagingRefusal.realtimeURLNotFound }
            return try ServerAPIRoutes.json(RealtimeUrlRequest(realtimeURL: url))
        }
        on("DELETE", "/realtime/url") { _, _ in
            try await store.deleteRetentionRealtimeURL()
            return ok
        }
        on("POST", "/performanceTest") { request, _ in
            let body = try ServerAPIRoutes.decode(PerformanceTestRequest.self, request)
            let test = try await store.startRetentionPerformanceTest(originalTransactionId: body.originalTransactionId)
            tester.run(test)
            return try ServerAPIRoutes.json(PerformanceTestResponse(config: test.config, requestId: test.requestId))
        }
        on("GET", "/performanceTest/result/{requestId}") { _, context in
            let test = try await store.retentionPerformanceTest(context["requestId"])
            let result = test.result ?? PerformanceTestResultResponse(
                config: test.config, target: test.target, result: .pending, successRate: 0, numPending: test.config.totalRequests ?? 0,
                responseTimes: PerformanceTestResponseTimes(average: 0, p50: 0, p90: 0, p95: 0, p99: 0), failures: [:])
            return try ServerAPIRoutes.json(result)
        }
    }
}
