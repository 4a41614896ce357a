import Crypto
import Foundation

extension Digest {
    /// The digest's bytes, copied in one piece (`Data(digest)` would copy byte by byte).
    var bytes: Data {
        withUnsafeBytes { Data($0) }
    }
}
