import AppStoreModels
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPService
import Testing

/// The server answers connections whatever their descriptor number: with `select()` libmicrohttpd
/// dropped every connection numbered 1024 or more, unanswered, once a process held that many files.
struct DescriptorLimitTests {
    @Test("with more than 1,024 descriptors open in the process, every request is still answered")
    func manyOpenDescriptors() async throws {
        // Raise the process's descriptor numbers past FD_SETSIZE; closed again at the end.
        var held: [Int32] = []
        defer { for descriptor in held { close(descriptor) } }
        while held.count < 1_100 {
            let descriptor = open("/dev/null", O_RDONLY | O_CLOEXEC)
            try #require(descriptor >= 0, "cannot open /dev/null: \(String(cString: strerror(errno)))")
            held.append(descriptor)
        }
        try #require(held.max()! >= 1_024)
        let server = try HTTPServer { _ in .text(200, "answered") }
        defer { server.stop() }
        for _ in 0..<20 {
            var request = URLRequest(url: server.url.appendingPathComponent("hello"))
            request.setValue("close", forHTTPHeaderField: "Connection")
            let (data, response) = try await TestHTTP.session.detachedData(for: request)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(String(decoding: data, as: UTF8.self) == "answered")
        }
    }
}
