import AsyncHTTPClient
import CohortBase
import CohortGit
import CohortIdentity
import CohortServerAPI
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import Synchronization

/// Talks to a Cohort server's identity API: links, challenges, tokens, publishing. One client per
/// use; `shutdown()` when done.
public final class ServerClient: Sendable {
    private let configuration: HTTPClient.Configuration
    /// Made on first use: a sync with a folder remote never needs it, nor its threads.
    private let client = Mutex<HTTPClient?>(nil)
    /// Seconds any one request may take.
    let timeout: Int64
    /// The PEM file of trusted certificates, when one replaces the system's.
    private let certificateAuthority: String?
    /// Headers added to every request (the exchange benchmark names a client through a trusted proxy).
    private let headers: @Sendable () -> [(String, String)]

    var http: HTTPClient {
        client.withLock { client in
            if let client { return client }
            let made = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            client = made
            return made
        }
    }

    /// - Parameter certificateAuthority: a PEM file of trusted certificates for `https` servers;
    ///   defaults to `GIT_SSL_CAINFO`, as git reads it, then the system's.
    /// - Parameter headers: added to every request.
    public init(certificateAuthority: String? = ProcessInfo.processInfo.environment["GIT_SSL_CAINFO"], timeout: Int64 = 30,
                headers: @escaping @Sendable () -> [(String, String)] = { [] }) {
        self.headers = headers
        var tls = TLSConfiguration.makeClientConfiguration()
        if let certificateAuthority, !certificateAuthority.isEmpty {
            tls.trustRoots = .file(certificateAuthority)
            self.certificateAuthority = certificateAuthority
        } else {
            self.certificateAuthority = nil
        }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls, redirectConfiguration: .disallow)
        configuration.timeout = .init(connect: .seconds(5), read: .seconds(timeout))
        // A refused connection is said at once, as git says it, not retried until the connect deadline.
        configuration.connectionPool.retryConnectionEstablishment = false
        self.configuration = configuration
        self.timeout = timeout
    }

    public func shutdown() async {
        let made = client.withLock { client -> HTTPClient? in
            defer { client = nil }
            return client
        }
        try? await made?.shutdown()
    }

    /// `GET /.well-known/cohort` at `base`: nil when the server there is not Cohort's.
    public func serverInfo(base: String) async -> ServerAPI.ServerInfo? {
        // Short: a host that is not Cohort's (or is down) must not hold git up.
        guard let (status, body) = try? await send("GET", "\(base)/.well-known/cohort", body: nil, timeout: 3), status == 200 else { return nil }
        guard let info = try? ServerAPI.decode(ServerAPI.ServerInfo.self, from: body, what: "server info"), info.server == "cohort" else {
            return nil
        }
        return info
    }

    /// The link's public description.
    public func linkInfo(_ link: CollaborationLink) async throws -> ServerAPI.LinkInfo {
        try await call("GET", link.url, body: nil, as: ServerAPI.LinkInfo.self)
    }

    public func challenge(_ link: CollaborationLink, operation: ChallengeOperation) async throws -> ServerAPI.ChallengeResponse {
        try await call("POST", "\(link.url)/challenge", body: ServerAPI.encode(ServerAPI.ChallengeRequest(operation: operation)),
                       as: ServerAPI.ChallengeResponse.self)
    }

    public func token(_ link: CollaborationLink, operation: ChallengeOperation, proof: SignedIdentityProof) async throws -> ServerAPI.TokenResponse {
        try await call("POST", "\(link.url)/token", body: ServerAPI.encode(ServerAPI.TokenRequest(operation: operation, proof: proof)),
                       as: ServerAPI.TokenResponse.self)
    }

    public func publish(_ link: CollaborationLink, request: ServerAPI.PublishRequest) async throws -> ServerAPI.PublishResponse {
        try await call("PUT", link.url, body: ServerAPI.encode(request), as: ServerAPI.PublishResponse.self)
    }

    /// One JSON call: a 2xx body decoded as `type`, an error body as its `CohortError`.
    func call<T: Decodable>(_ method: String, _ url: String, body: Data?, as type: T.Type) async throws -> T {
        let (status, data) = try await send(method, url, body: body)
        guard (200..<300).contains(status) else {
            if let error = try? ServerAPI.decode(ServerAPI.ErrorBody.self, from: data, what: "error") {
                throw error.cohortError
            }
            throw CohortError(.network, "\(url) answered HTTP \(status), not Cohort's API", hint: "check the link: is it a Cohort server?")
        }
        do {
            return try ServerAPI.decode(type, from: data, what: "the server's answer")
        } catch {
            throw CohortError(.network, "\(url) did not answer in Cohort's API", hint: "check the link: is it a Cohort server?")
        }
    }

    private func send(_ method: String, _ url: String, body: Data?, timeout: Int64? = nil) async throws -> (Int, Data) {
        var request = HTTPClientRequest(url: url)
        request.method = HTTPMethod(rawValue: method)
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "User-Agent", value: "cohort/\(CohortVersion.text)")
        for (name, value) in headers() { request.headers.add(name: name, value: value) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        do {
            let response = try await http.execute(request, timeout: .seconds(timeout ?? self.timeout))
            let buffer = try await response.body.collect(upTo: ServerAPI.maxBodyBytes)
            return (Int(response.status.code), Data(buffer.readableBytesView))
        } catch let error as CohortError {
            throw error
        } catch {
            // BoringSSL only says the connection failed: name the file it could not read.
            if let certificateAuthority, url.lowercased().hasPrefix("https:"), !FileManager.default.isReadableFile(atPath: certificateAuthority) {
                throw GitRuntime.unreadableAuthority(certificateAuthority)
            }
            throw NetworkFailure.error(error, url: url)
        }
    }
}
