import Foundation
import HTTPTypes

/// Which address a request comes from. Directly, the socket's peer. Behind a proxy named with
/// `--trusted-proxy` (nginx), the proxy appends the address it saw to `X-Forwarded-For`; read from
/// the right, the first address that is not a trusted proxy is the client. A client can put anything
/// in the header it sends, but only what the trusted proxies appended is read.
struct ClientAddress: Sendable {
    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!
    /// Most of the header's right end read, and most entries looked at.
    static let maxHeaderBytes = 4096
    static let maxEntries = 16

    let trusted: Set<String>

    init(trustedProxies: [String]) {
        trusted = Set(trustedProxies.compactMap(Self.canonical))
    }

    func resolve(peer: String?, headers: HTTPFields) -> String {
        guard let peer, let canonicalPeer = Self.canonical(peer) else { return peer ?? "unknown" }
        guard trusted.contains(canonicalPeer) else { return canonicalPeer }
        let joined = headers[values: Self.forwardedFor].joined(separator: ",")
        guard !joined.isEmpty else { return canonicalPeer }
        // Only the right end matters (what the trusted proxies appended): a long header is cut from
        // the left, and its first, perhaps partial, entry left out.
        var entries = String(decoding: joined.utf8.suffix(Self.maxHeaderBytes), as: UTF8.self).split(separator: ",")
        if joined.utf8.count > Self.maxHeaderBytes, !entries.isEmpty { entries.removeFirst() }
        for entry in entries.suffix(Self.maxEntries).reversed() {
            guard let address = Self.canonical(entry.trimmingCharacters(in: .whitespaces)) else { return canonicalPeer }
            if !trusted.contains(address) { return address }
        }
        return canonicalPeer
    }

    /// An IPv4 or IPv6 address in one spelling (IPv4-mapped IPv6 as IPv4), or nil when `text` is not one.
    static func canonical(_ text: String) -> String? {
        var v4 = in_addr()
        var v6 = in6_addr()
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        if inet_pton(AF_INET, text, &v4) == 1, inet_ntop(AF_INET, &v4, &buffer, socklen_t(buffer.count)) != nil {
            return String(cString: buffer)
        }
        if inet_pton(AF_INET6, text, &v6) == 1, inet_ntop(AF_INET6, &v6, &buffer, socklen_t(buffer.count)) != nil {
            let spelled = String(cString: buffer)
            // An IPv4 peer on a socket listening on [::] is `::ffff:a.b.c.d`: the same address.
            if spelled.hasPrefix("::ffff:"), let v4 = canonical(String(spelled.dropFirst(7))), !v4.contains(":") { return v4 }
            return spelled
        }
        return nil
    }
}
