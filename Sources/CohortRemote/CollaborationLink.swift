import CohortBase
import CohortServerAPI
import Foundation

/// A collaboration link, `http(s)://host[:port][/prefix]/c/<identifier>`: the server's base URL and
/// the collaboration's identifier. The link is also the git URL.
public struct CollaborationLink: Sendable, Hashable, CustomStringConvertible {
    /// `scheme://host[:port][/prefix]`, without a trailing slash.
    public let base: String
    public let identifier: String

    public init(base: String, identifier: String) {
        self.base = base.hasSuffix("/") ? String(base.dropLast()) : base
        self.identifier = identifier
    }

    /// Parses a link; a trailing slash or `.git` is tolerated.
    public init(_ text: String) throws {
        func refuse() -> CohortError {
            CohortError(.malformed, "'\(text.prefix(100))' is not a collaboration link",
                        hint: "links look like https://host/c/<identifier>")
        }
        guard text.utf8.count <= 2048, let components = URLComponents(string: text),
              let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = components.host, !host.isEmpty, components.query == nil, components.fragment == nil,
              components.user == nil, components.password == nil
        else { throw refuse() }
        var segments = components.path.split(separator: "/").map(String.init)
        if segments.last?.hasSuffix(".git") == true {
            segments[segments.count - 1] = String(segments[segments.count - 1].dropLast(4))
        }
        guard segments.count >= 2, segments[segments.count - 2] == ServerAPI.collaborationPrefix else { throw refuse() }
        let identifier = segments[segments.count - 1]
        try ServerAPI.checkHostable(identifier)
        let prefix = segments.dropLast(2).map { "/" + $0 }.joined()
        // Default ports are left out, as servers see them in the Host header.
        let port = components.port.flatMap { ($0 == 80 && scheme == "http") || ($0 == 443 && scheme == "https") ? nil : ":\($0)" } ?? ""
        let shownHost = host.contains(":") ? "[\(host.lowercased())]" : host.lowercased()
        self.init(base: "\(scheme)://\(shownHost)\(port)\(prefix)", identifier: identifier)
    }

    /// The link, which is also the URL git clones.
    public var url: String { "\(base)/\(ServerAPI.collaborationPrefix)/\(identifier)" }

    public var description: String { url }
}
