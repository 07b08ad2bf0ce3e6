import COpenSSL
import Foundation

/// One-shot SHA-2 digests through OpenSSL.
enum OpenSSLDigest {
    static func sha256(_ data: Data) -> Data { digest(data, EVP_sha256(), length: 32) }
    static func sha384(_ data: Data) -> Data { digest(data, EVP_sha384(), length: 48) }

    private static func digest(_ data: Data, _ method: OpaquePointer?, length: Int) -> Data {
        var output = Data(count: length)
        var written: UInt32 = 0
        let status = output.withUnsafeMutableBytes { out in
            data.withUnsafeBytes { input in
                EVP_Digest(input.baseAddress, input.count,
                           out.baseAddress!.assumingMemoryBound(to: UInt8.self), &written, method, nil)
            }
        }
        // EVP_Digest only fails on allocation failure or a missing algorithm; both are fatal here.
        precondition(status == 1 && Int(written) == length, "OpenSSL could not compute a SHA-2 digest")
        return output
    }
}
