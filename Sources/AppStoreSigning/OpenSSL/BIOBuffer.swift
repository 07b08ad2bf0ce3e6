import COpenSSL
import Foundation

/// Helpers that move bytes between Swift and OpenSSL's buffers.
enum OpenSSLBytes {
    /// Calls an OpenSSL `i2d_*`-style function twice (length, then bytes) and returns the DER.
    static func encode(_ body: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32) -> Data? {
        let length = body(nil)
        guard length > 0 else { return nil }
        var data = Data(count: Int(length))
        let written = data.withUnsafeMutableBytes { raw -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
            return body(&cursor)
        }
        return written == length ? data : nil
    }

    /// Calls an OpenSSL `d2i_*`-style function on DER bytes.
    static func decode<T>(_ der: Data, _ body: (UnsafeMutablePointer<UnsafePointer<UInt8>?>, Int) -> T?) -> T? {
        guard !der.isEmpty else { return nil }
        return der.withUnsafeBytes { raw -> T? in
            var cursor: UnsafePointer<UInt8>? = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
            return body(&cursor, raw.count)
        }
    }

    /// The contents of a memory BIO.
    static func contents(of bio: OpaquePointer) -> Data {
        var pointer: UnsafeMutablePointer<CChar>?
        let length = shim_BIO_get_mem_data(bio, &pointer)
        guard length > 0, let pointer else { return Data() }
        return Data(bytes: pointer, count: length)
    }
}
