import Foundation
import HTTPService
import Synchronization
import Testing

/// The router: routes found through the tree of their segments (literals before captures before a
/// rest), 404 and 405 from the whole table, groups with middleware and refusals of their own, each
/// chain composed once.
@Suite(.timeLimit(.minutes(10)))
struct RouterTests {
    /// Middleware that records what passed it, in order.
    struct Tag: HTTPMiddleware {
        let name: String
        let seen: Seen

        func handle(_ request: HTTPRequest, context: RequestContext,
                    next: @Sendable (HTTPRequest, RequestContext) async throws -> HTTPResponse) async throws -> HTTPResponse {
            seen.add(name)
            return try await next(request, context)
        }
    }

    final class Seen: Sendable {
        private let names = Mutex<[String]>([])
        func add(_ name: String) { names.withLock { $0.append(name) } }
        func take() -> [String] { names.withLock { names in defer { names = [] }; return names } }
    }

    static func answer(_ text: String) -> Router.Responder {
        { _, context in .text(200, text + (context.parameters.isEmpty ? "" : " " + context.parameters.sorted { $0.key < $1.key }
                                                                        .map { "\($0.key)=\($0.value)" }.joined(separator: ","))) }
    }

    func body(_ response: HTTPResponse) -> String { String(decoding: response.body, as: UTF8.self) }

    @Test("the port a Host names, for cookies named by port: IPv4, names and IPv6 literals, with and without a port",
          arguments: [("127.0.0.1:8080", "8080"), ("localhost", "80"), ("[::1]:9", "9"), ("[::1]", "80"), ("example.test:443", "443")])
    func hostPort(_ host: String, _ port: String) {
        #expect(HostCheck.port(of: HTTPRequest(method: "GET", rawPath: "/", headers: ["host": host])) == port)
        #expect(AccessToken.cookieName(for: HTTPRequest(method: "GET", rawPath: "/", headers: ["host": host])) == "storekit_session_" + port)
    }

    @Test("literal segments win over captures, captures over a rest; each route gets its own captures")
    func precedence() async {
        var router = Router()
        router.on("GET", "/a/{x}/c", Self.answer("capture-c"))
        router.on("GET", "/a/b/d", Self.answer("literal-d"))
        router.on("GET", "/a/b", Self.answer("literal-b"))
        router.on("GET", "/a/{name}", Self.answer("capture"))
        router.on("GET", "/files/{path...}", Self.answer("rest"))
        let table = router.compiled()
        func get(_ path: String) async -> String { body(await table.respond(to: HTTPRequest(method: "GET", path: path))) }
        #expect(await get("/a/b/d") == "literal-d")
        #expect(await get("/a/b/c") == "capture-c x=b", "the literal b leads nowhere for c, so the capture is tried")
        #expect(await get("/a/b") == "literal-b")
        #expect(await get("/a/z") == "capture name=z")
        #expect(await get("/files/x/y/z") == "rest path=x/y/z")
        #expect(await table.respond(to: HTTPRequest(method: "HEAD", path: "/a/b")).status == 200)
    }

    @Test("a path no route has is 404; one other routes take by another method is 405 naming them all")
    func refusals() async {
        var router = Router()
        router.on("GET", "/items/{id}", Self.answer("get"))
        router.on("DELETE", "/items/{id}", Self.answer("delete"))
        router.on("POST", "/items/new", Self.answer("post"))
        let table = router.compiled()
        #expect(await table.respond(to: HTTPRequest(method: "GET", path: "/nothing")).status == 404)
        let wrong = await table.respond(to: HTTPRequest(method: "PUT", path: "/items/new"))
        #expect(wrong.status == 405)
        #expect(wrong.headers.first { $0.name == "Allow" }?.value == "DELETE, GET, POST")
        #expect(await table.respond(to: HTTPRequest(method: "GET", path: "/items/new")).status == 200, "a literal without GET falls back to the capture")
    }

    @Test("a group's routes and refusals run the router's middleware, then the group's; other routes only the router's")
    func groups() async {
        let seen = Seen()
        var router = Router()
        router.add(middleware: Tag(name: "router", seen: seen))
        router.on("GET", "/plain", Self.answer("plain"))
        router.group("/api", middleware: [Tag(name: "api", seen: seen)], refusalResponse: { error, _ in .text(error.status, "api refusal") }) { api in
            api.on("GET", "/v1/things/{id}", Self.answer("thing"))
        }
        let table = router.compiled()
        #expect(body(await table.respond(to: HTTPRequest(method: "GET", path: "/api/v1/things/7"))) == "thing id=7")
        #expect(seen.take() == ["router", "api"])
        #expect(body(await table.respond(to: HTTPRequest(method: "GET", path: "/plain"))) == "plain")
        #expect(seen.take() == ["router"])
        let missing = await table.respond(to: HTTPRequest(method: "GET", path: "/api/v2/unknown"))
        #expect(missing.status == 404 && body(missing) == "api refusal")
        #expect(seen.take() == ["router", "api"], "a group's checks cover its unknown paths too")
        let elsewhere = await table.respond(to: HTTPRequest(method: "GET", path: "/other"))
        #expect(elsewhere.status == 404 && body(elsewhere) != "api refusal")
        #expect(seen.take() == ["router"])
        let badPath = await table.respond(to: HTTPRequest(method: "GET", rawPath: "/api/v1/things/%ZZ"))
        #expect(badPath.status == 400 && body(badPath) == "api refusal")
    }
}
