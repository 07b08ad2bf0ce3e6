import AppStoreModels
import Foundation
import HTTPService
import Testing

/// The server answers connections whatever their descriptor number: with `select()` libmicrohttpd
/// dropped every connection numbered 1024 or more, unanswered, once a process held that many files.
@Suite(.timeLimit(.minutes(10)))
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
        try await HTTPServer.serving(handler: { _ in .text(200, "answered") }) { server in
            for _ in 0..<20 {
                // A new connection each time: its descriptor is numbered past 1,024.
                let answer = try await Exchange.send("GET", server.url.appendingPathComponent("hello"), headers: [("Connection", "close")])
                #expect(answer.status == 200)
                #expect(String(decoding: answer.body, as: UTF8.self) == "answered")
            }
        }
    }
}
