import CohortBase
import CohortHooks
import CohortIdentity
import CohortServerAPI
import Crypto
import Foundation
import Synchronization
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOSSL

/// `cohort serve`: collaborations as bare repositories behind git's smart HTTP, every request gated by
/// a token that a signed identity proof bought, every push verified by the hook.
public final class CohortServer: Sendable {
    public let configuration: ServerConfiguration
    let store: CollaborationStore
    let members: MembershipReader
    let challengeKey: SymmetricKey
    let state: any ServerState
    let tokens: TokenAuthority
    let limiter: RequestLimiter
    let transfer: GitTransfer
    let logger: Logger
    /// The name challenges and tokens are bound to: the public URL, or a stable name made once.
    public let identity: String
    /// The bound port, once listening (the configured one until then): part of the name when no
    /// `--public-url` is set.
    let boundPort: Mutex<Int?> = Mutex(nil)

    /// Opens the data directory and, with `configuration.state`, connects to PostgreSQL and brings its
    /// schema up to date.
    public init(configuration: ServerConfiguration, logger: Logger) async throws {
        try configuration.validate()
        self.configuration = configuration
        self.logger = logger
        // The hooks ask the resident verifier through cohort-hook-client, which must sit beside the binary.
        var resident = configuration.verifierSocket
        if let socket = resident, !HookInstaller.hasClient(beside: configuration.hookBinary) {
            logger.warning("no resident verifier: cohort-hook-client is not beside the binary the hooks call, so each push runs a hook program started for it (build with `make release`, which puts it there)",
                           metadata: ["verifier.socket": "\(socket.path)", "hook.binary": "\(configuration.hookBinary.path)"])
            resident = nil
        }
        store = try CollaborationStore(dataDirectory: configuration.dataDirectory, hookBinary: configuration.hookBinary, resident: resident)
        for (identifier, error) in store.refreshHooks() {
            logger.warning("the hooks of a hosted repository could not be installed again; its pushes run the hooks it has (run `cohort hook install` on it, or move a hook that is not Cohort's aside; the next start tries again)",
                           metadata: ["collaboration": "\(identifier)", "error": "\(error)"])
        }
        members = MembershipReader(store: store)
        identity = try configuration.publicBase ?? Self.stableName(in: store.serverDirectory)
        let limits = configuration.limits
        let key = try ChallengeKeyFile.loadOrCreate(at: store.serverDirectory.appendingPathComponent("challenge.key"))
        tokens = try TokenAuthority(
            server: identity, key: ChallengeKeyFile.loadOrCreate(at: store.serverDirectory.appendingPathComponent("token.key")),
            lifetime: TimeInterval(limits.tokenLifetime)
        )
        limiter = RequestLimiter(identityRequestsPerMinute: limits.identityRequestsPerMinute,
                                 maxConcurrentTransfers: limits.maxConcurrentTransfers)
        if let shared = configuration.state {
            state = try await PostgresServerState.start(shared, store: store, limits: limits, sinks: configuration.sinks, limiter: limiter, logger: logger)
        } else {
            state = try FileServerState(store: store, limiter: limiter)
        }
        // Challenges are good only where their spending is recorded: an instance on another store (files,
        // or another database) takes them for forged rather than spend them a second time.
        challengeKey = state.storeIdentity.map { Self.challengeKey(key, forStore: $0) } ?? key
        transfer = GitTransfer(git: configuration.gitExecutable, limits: limits, environment: state.hookEnvironment)
    }

    /// The challenge key of instances sharing the store named `identity` (made once, in the store):
    /// derived from `challenge.key`, so that however each instance spells the database's address,
    /// they agree.
    static func challengeKey(_ key: SymmetricKey, forStore identity: String) -> SymmetricKey {
        let label = Data("COHORT-SHARED-CHALLENGES\0\(identity)".utf8)
        return SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: label, using: key)))
    }

    /// A random server name kept in `server/identity`, so challenges and tokens survive restarts.
    static func stableName(in directory: URL) throws -> String {
        let url = directory.appendingPathComponent("identity")
        if FileManager.default.fileExists(atPath: url.path) {
            let text = String(decoding: try AtomicFile.read(url, maxBytes: 256, what: "server identity"), as: UTF8.self)
            return text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let name = "cohort-server-" + UUID().uuidString.lowercased()
        do {
            try AtomicFile.write(Data((name + "\n").utf8), to: url, mode: 0o600, replacing: false)
            return name
        } catch {
            return String(decoding: try AtomicFile.read(url, maxBytes: 256, what: "server identity"), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    /// The router with every route; tests drive it in process or over a socket.
    public func router() -> Router<ServerContext> {
        let router = Router(context: ServerContext.self)
        router.add(middleware: AccessLog(logger: logger, clients: ClientAddress(trustedProxies: configuration.trustedProxies)))
        router.add(middleware: HostCheck(server: self))
        router.get("/.well-known/cohort") { [self] _, _ in
            jsonResponse(ServerAPI.ServerInfo(version: CohortVersion.text, identity: identity))
        }
        addLinkRoutes(to: router)
        addIdentityRoutes(to: router)
        addGitRoutes(to: router)
        return router
    }

    /// Loads the TLS certificate chain and key as `run` will, so that a missing or unreadable file is
    /// named before anything is created.
    public static func checkTLS(certificate: URL, key: URL) throws {
        _ = try tlsConfiguration(certificate: certificate, key: key)
    }

    static func tlsConfiguration(certificate: URL, key: URL) throws -> TLSConfiguration {
        for (file, what) in [(certificate, "TLS certificate"), (key, "TLS key")] where !FileManager.default.isReadableFile(atPath: file.path) {
            throw CohortError(.io, "cannot read the \(what) \(file.path): \(FileManager.default.fileExists(atPath: file.path) ? "permission denied" : "no such file")",
                              hint: "give a PEM file with --tls-cert and its key with --tls-key")
        }
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificate.path)
        } catch {
            throw CohortError(.malformed, "\(certificate.path) is not a PEM certificate chain", hint: "give the certificate in PEM form with --tls-cert")
        }
        let privateKey: NIOSSLPrivateKey
        do {
            privateKey = try NIOSSLPrivateKey(file: key.path, format: .pem)
        } catch {
            throw CohortError(.malformed, "\(key.path) is not a PEM private key", hint: "give the certificate's unencrypted key in PEM form with --tls-key")
        }
        return TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(privateKey))
    }

    /// Binds, prints nothing, calls `onListening` with the bound port, and serves until SIGTERM or
    /// SIGINT, then lets in-flight requests finish (bounded by the grace period).
    public func run(onListening: @escaping @Sendable (Int) async -> Void) async throws {
        let server: HTTPServerBuilder
        let http1 = HTTPServerBuilder.http1(configuration: .init(idleTimeout: .seconds(300)))
        if let certificate = configuration.tlsCertificate, let key = configuration.tlsKey {
            let tls = try Self.tlsConfiguration(certificate: certificate, key: key)
            server = try .tls(http1, tlsConfiguration: tls)
        } else {
            server = http1
        }
        let application = Application(
            router: router(),
            server: server,
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "cohort"),
            services: state.services + (store.resident.map { [ResidentVerifierService(program: configuration.hookBinary, socket: $0, logger: logger)] } ?? []),
            onServerRunning: { [self] channel in
                let port = channel.localAddress?.port ?? 0
                boundPort.withLock { $0 = port }
                await onListening(port)
            },
            logger: logger
        )
        try await application.runService()
    }
}

extension CohortServer {
    func jsonResponse(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        var body = ServerAPI.encode(value)
        body.append(0x0A)
        return Response(status: status, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// The server's name, which links are made of and challenges carry: `--public-url`, or (only on a
    /// loopback address) the address it listens on. Never anything a request says.
    var name: String {
        configuration.baseURL(boundPort: boundPort.withLock { $0 } ?? configuration.port)
    }

    /// Whether `authority` (a request's `Host`) names this server; the scheme's default port may be
    /// written or left out.
    func answers(to authority: String) -> Bool {
        let base = name
        guard let scheme = URL(string: base)?.scheme, !authority.isEmpty, !authority.contains("/"),
              let theirs = ServerConfiguration.authority(of: "\(scheme)://\(authority)") else { return false }
        return ServerConfiguration.authority(of: base) == theirs
    }

    /// The challenge authority: challenges name the server (`name`), so a client can refuse to sign a
    /// challenge another server relays to it, and this server refuses requests addressed to another.
    func challenges() throws -> ChallengeAuthority {
        try ChallengeAuthority(server: name, key: challengeKey, spent: state.spentChallenges,
                               lifetime: configuration.limits.challengeLifetime)
    }

    func link(_ identifier: String) -> String {
        "\(name)/\(ServerAPI.collaborationPrefix)/\(identifier)"
    }

    /// A bounded request body.
    func collectBody(_ request: Request, what: String) async throws -> Data {
        do {
            var request = request
            let buffer = try await request.collectBody(upTo: ServerAPI.maxBodyBytes)
            return Data(buffer.readableBytesView)
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            throw CohortError(.tooLarge, "\(what) is larger than \(ServerAPI.maxBodyBytes >> 10) KiB")
        }
    }
}
