import CohortBase
import CohortHooks
import CohortIdentity
import CohortNotices
import Foundation

/// Everything `cohort serve` is told on its command line.
public struct ServerConfiguration: Sendable {
    /// Where collaborations and the server's keys live.
    public var dataDirectory: URL
    public var host: String
    public var port: Int
    /// The URL clients use (links and challenges name it); defaults to the listening address.
    public var publicURL: String?
    /// PEM certificate chain and private key: TLS when both are set.
    public var tlsCertificate: URL?
    public var tlsKey: URL?
    /// The `cohort` binary the repositories' hooks call.
    public var hookBinary: URL
    /// The `git` that serves upload-pack and receive-pack.
    public var gitExecutable: String
    public var limits: ServerLimits
    /// The PostgreSQL database the instances of one server share; nil keeps the state in files.
    public var state: PostgresLocation?
    /// Proxies (nginx) whose `X-Forwarded-For` names the client.
    public var trustedProxies: [String] = []
    /// Where the resident verifier the server runs beside it (`cohort hook serve`, a child process)
    /// listens; the hosted repositories' `pre-receive` hooks ask it first, and verify the push
    /// themselves whenever it does not answer. nil: each push runs a hook program started for it.
    public var verifierSocket: URL?
    /// The sink types `DATA/sinks.toml` may name (with `state`: the instances deliver to them; without,
    /// the hooks run `hookBinary`, which knows its own).
    public var sinks = SinkRegistry([])

    public init(
        dataDirectory: URL, host: String = "127.0.0.1", port: Int = 8377, publicURL: String? = nil,
        tlsCertificate: URL? = nil, tlsKey: URL? = nil, hookBinary: URL, gitExecutable: String = "/usr/bin/git",
        limits: ServerLimits = ServerLimits()
    ) {
        self.dataDirectory = dataDirectory
        self.host = host
        self.port = port
        self.publicURL = publicURL
        self.tlsCertificate = tlsCertificate
        self.tlsKey = tlsKey
        self.hookBinary = hookBinary
        self.gitExecutable = gitExecutable
        self.limits = limits
    }

    public var usesTLS: Bool { tlsCertificate != nil }

    /// The resident verifier's socket unless told otherwise: `DATA/server/verifier.sock`, in the
    /// folder only the server's user may write (too long for a socket when DATA is deep: `fitsSocket`).
    public static func defaultVerifierSocket(in dataDirectory: URL) -> URL {
        dataDirectory.appendingPathComponent("server/verifier.sock")
    }

    /// Whether a Unix socket may be bound at `socket` (`ResidentVerifier.maxSocketPathBytes`).
    public static func fitsSocket(_ socket: URL) -> Bool {
        socket.path.utf8.count <= ResidentVerifier.maxSocketPathBytes
    }

    /// `--public-url` without a trailing slash: the base of links and the name challenges carry.
    public var publicBase: String? {
        publicURL.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
    }

    /// The base URL of links, without a trailing slash.
    public func baseURL(boundPort: Int) -> String {
        if let publicBase { return publicBase }
        let scheme = usesTLS ? "https" : "http"
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://\(shownHost):\(boundPort)"
    }

    /// Whether `host` is a loopback address: the only place a server may name itself by its address.
    public static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        return inet_pton(AF_INET6, host, &v6) == 1 && host.filter { $0 != "0" && $0 != ":" } == "1"
    }

    /// The `host[:port]` of a base URL as a `Host` header carries it (lowercased, default ports left out).
    static func authority(of base: String) -> String? {
        guard let url = URL(string: base), let host = url.host?.lowercased() else { return nil }
        let shown = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        guard let port = url.port, !(url.scheme == "http" && port == 80), !(url.scheme == "https" && port == 443) else { return shown }
        return "\(shown):\(port)"
    }

    /// Whether `text` is an IPv4 or IPv6 address.
    public static func isAddress(_ text: String) -> Bool {
        ClientAddress.canonical(text) != nil
    }

    /// Checks what can be checked before binding.
    public func validate() throws {
        guard publicURL != nil || Self.isLoopback(host) else {
            throw CohortError(.malformed, "--public-url is required when listening on \(host.isEmpty ? "every address" : host)",
                              hint: "pass the URL clients use, e.g. --public-url https://cohort.example.org: challenges name the server from it, never from a request")
        }
        guard (tlsCertificate == nil) == (tlsKey == nil) else {
            throw CohortError(.malformed, "--tls-cert and --tls-key go together", hint: "pass both, or neither for plain HTTP")
        }
        guard (0...65535).contains(port) else {
            throw CohortError(.malformed, "port \(port) is out of range")
        }
        if let publicURL {
            guard let url = URL(string: publicURL), ["http", "https"].contains(url.scheme ?? ""), url.host != nil,
                  url.query == nil, url.fragment == nil, publicURL.utf8.count <= 200
            else {
                throw CohortError(.malformed, "--public-url '\(publicURL.prefix(60))' is not an http(s) URL",
                                  hint: "e.g. https://cohort.example.org or https://example.org/cohort")
            }
        }
        if let verifierSocket {
            guard verifierSocket.path.hasPrefix("/"), Self.fitsSocket(verifierSocket) else {
                throw CohortError(.malformed, "--verifier-socket \(verifierSocket.path.prefix(60)) is not an absolute path of at most \(ResidentVerifier.maxSocketPathBytes) bytes",
                                  hint: "give a short path in a folder only the server's user may write, such as /run/cohort/verifier.sock")
            }
        }
        for proxy in trustedProxies where ClientAddress.canonical(proxy) == nil {
            throw CohortError(.malformed, "--trusted-proxy \(proxy.prefix(60)) is not an IP address", hint: "give the proxy's address, e.g. 127.0.0.1")
        }
        try limits.validate()
    }
}

/// What one server accepts; every number from outside is bounded by one of these.
public struct ServerLimits: Sendable {
    /// Largest push (pack bytes after decompression).
    public var maxPushBytes: Int = 2 << 30
    /// Largest fetch negotiation request (after decompression).
    public var maxFetchRequestBytes: Int = 64 << 20
    /// git processes running at once; more get 429.
    public var maxConcurrentTransfers: Int = 64
    /// Wall-clock seconds one transfer may take.
    public var maxTransferSeconds: Int = 3600
    /// Challenge and token requests per client address per minute; more get 429.
    public var identityRequestsPerMinute: Int = 120
    /// Seconds a challenge may be answered.
    public var challengeLifetime: UInt16 = 120
    /// Seconds an access token lives.
    public var tokenLifetime: Int = 600
    /// Seconds an instance holds a server sink before another may deliver to it (with `--state`).
    public var deliveryLease: Int = 30
    /// The delivery leases a server takes.
    public static let deliveryLeaseRange = 3...3600

    public init() {}

    func validate() throws {
        guard maxPushBytes > 0, maxFetchRequestBytes > 0, maxConcurrentTransfers > 0, maxTransferSeconds > 0,
              identityRequestsPerMinute > 0
        else {
            throw CohortError(.malformed, "server limits must be positive")
        }
        guard (1...Challenge.maxLifetime).contains(challengeLifetime) else {
            throw CohortError(.malformed, "the challenge lifetime must be 1 to \(Challenge.maxLifetime) s")
        }
        guard (10...86_400).contains(tokenLifetime) else {
            throw CohortError(.malformed, "the token lifetime must be 10 s to 24 h")
        }
        guard Self.deliveryLeaseRange.contains(deliveryLease) else {
            let range = Self.deliveryLeaseRange
            throw CohortError(.malformed, "the delivery lease must be \(range.lowerBound) to \(range.upperBound) s",
                              hint: "pass --delivery-lease SECONDS between \(range.lowerBound) and \(range.upperBound)")
        }
    }
}
