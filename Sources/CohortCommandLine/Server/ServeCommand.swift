import ArgumentParser
import CohortBase
import CohortHooks
import CohortIdentity
import CohortServer
import Foundation
import Logging

struct ServeCommand: AsyncCohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Host collaborations over git's smart HTTP; every pull and push needs a proof of identity.",
        discussion: """
        Collaborations live as bare repositories under DIR/collaborations (Cohort's hooks installed), the \
        server's keys under DIR/server (0600), and DIR/sinks.toml (optional) names sinks for every \
        collaboration's notices. Prints `listening on URL` when ready; logs are JSON lines on standard \
        error. SIGTERM or SIGINT stops accepting and lets running requests finish. See Docs/Server.md.
        """
    )

    @Option(help: ArgumentHelp("The data directory (created if missing).", valueName: "DIR"))
    var data: String

    @Option(help: ArgumentHelp("Address and port to listen on; port 0 picks a free one.", valueName: "HOST:PORT"))
    var listen = "127.0.0.1:8377"

    @Option(name: .customLong("tls-cert"), help: ArgumentHelp("PEM certificate chain: serve HTTPS (with --tls-key).", valueName: "FILE"))
    var tlsCert: String?

    @Option(name: .customLong("tls-key"), help: ArgumentHelp("PEM private key of the certificate.", valueName: "FILE"))
    var tlsKey: String?

    @Option(name: .customLong("public-url"), help: ArgumentHelp("The URL clients reach this server at; links and challenges name it, and requests for another Host are refused. Required unless listening on loopback.", valueName: "URL"))
    var publicURL: String?

    @Option(name: .customLong("max-push-mb"), parsing: .unconditional, help: ArgumentHelp("Largest push accepted, in MiB.", valueName: "N"))
    var maxPushMB = 2048

    @Option(name: .customLong("max-transfers"), parsing: .unconditional, help: ArgumentHelp("git transfers running at once; more are answered 429.", valueName: "N"))
    var maxTransfers = 64

    @Option(name: .customLong("token-lifetime"), parsing: .unconditional, help: ArgumentHelp("Seconds an access token lives.", valueName: "S"))
    var tokenLifetime = 600

    @Option(name: .customLong("challenge-lifetime"), parsing: .unconditional, help: ArgumentHelp("Seconds a challenge may be answered (1 to 300).", valueName: "S"))
    var challengeLifetime = 120

    @Option(name: .customLong("identity-rate"), parsing: .unconditional, help: ArgumentHelp("Challenge and token requests per client address per minute.", valueName: "N"))
    var identityRate = 120

    @Option(help: ArgumentHelp("A PostgreSQL database the instances of one server share (spent challenges, request limits, the server sinks' outbox): postgres://USER@HOST[:PORT]/DATABASE, the password in PGPASSWORD. Also read from COHORT_SERVE_STATE. Without it the state stays in DIR/server.", valueName: "URL"))
    var state: String?

    @Option(name: .customLong("trusted-proxy"), parsing: .singleValue, help: ArgumentHelp("A proxy (nginx) in front of this server, by IP address: the client address its X-Forwarded-For names is used for limits and logs. Repeatable.", valueName: "ADDRESS"))
    var trustedProxies: [String] = []

    @Option(name: .customLong("delivery-lease"), parsing: .unconditional, help: ArgumentHelp("With --state: seconds an instance holds a server sink before another instance may take over its delivery (default 30).", valueName: "S"))
    var deliveryLease: Int?

    @Option(name: .customLong("verifier-socket"), help: ArgumentHelp("Where the resident verifier this server runs (`cohort hook serve`) listens (an absolute path of at most 107 bytes); the hosted repositories' hooks ask it first. Default DIR/server/verifier.sock. With several instances on one data directory on several machines, give a path on each machine's own disk, the same on each.", valueName: "PATH"))
    var verifierSocket: String?

    @Flag(name: .customLong("no-resident-verifier"), help: "Run no resident verifier: each push runs a hook program started for it.")
    var noResidentVerifier = false

    @Option(name: .customLong("log-level"), help: ArgumentHelp("trace, debug, info, notice, warning, error or critical.", valueName: "LEVEL"))
    var logLevel = "info"

    func validate() throws {
        guard (try? Self.parseListen(listen)) != nil else {
            throw ValidationError("--listen \(listen.prefix(60)) is not HOST:PORT (e.g. 127.0.0.1:8377, or :8377 for every address)")
        }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level \(logLevel.prefix(20)) is not one of trace, debug, info, notice, warning, error, critical")
        }
        guard (1...(1 << 20)).contains(maxPushMB) else { throw ValidationError("--max-push-mb must be 1 to \(1 << 20)") }
        guard (1...100_000).contains(maxTransfers) else { throw ValidationError("--max-transfers must be 1 to 100000") }
        guard (10...86_400).contains(tokenLifetime) else { throw ValidationError("--token-lifetime must be 10 to 86400 seconds") }
        guard (1...Int(Challenge.maxLifetime)).contains(challengeLifetime) else {
            throw ValidationError("--challenge-lifetime must be 1 to \(Challenge.maxLifetime) seconds")
        }
        guard (1...1_000_000).contains(identityRate) else { throw ValidationError("--identity-rate must be 1 to 1000000") }
        guard (tlsCert == nil) == (tlsKey == nil) else { throw ValidationError("--tls-cert and --tls-key go together") }
        guard verifierSocket == nil || !noResidentVerifier else { throw ValidationError("--verifier-socket and --no-resident-verifier exclude each other") }
        if let verifierSocket {
            guard verifierSocket.hasPrefix("/"), !verifierSocket.hasSuffix("/") else {
                throw ValidationError("--verifier-socket \(verifierSocket.prefix(60)) is not the absolute path of a file (e.g. /run/cohort/verifier.sock)")
            }
            guard ServerConfiguration.fitsSocket(URL(fileURLWithPath: verifierSocket)) else {
                throw ValidationError("--verifier-socket is \(verifierSocket.utf8.count) bytes long; a socket's path may have at most \(ResidentVerifier.maxSocketPathBytes) (e.g. /run/cohort/verifier.sock)")
            }
        }
        if let deliveryLease {
            guard ServerLimits.deliveryLeaseRange.contains(deliveryLease) else { throw ValidationError("--delivery-lease must be 3 to 3600 seconds") }
            guard stateText != nil else {
                throw ValidationError("--delivery-lease applies only with --state (one instance delivers its sinks through the hooks)")
            }
        }
        for proxy in trustedProxies where !ServerConfiguration.isAddress(proxy) {
            throw ValidationError("--trusted-proxy \(proxy.prefix(60)) is not an IP address (e.g. 127.0.0.1)")
        }
    }

    /// `--state`, or `COHORT_SERVE_STATE` (so that a password in the URL stays off the command line).
    var stateText: String? {
        state ?? ProcessInfo.processInfo.environment["COHORT_SERVE_STATE"].flatMap { $0.isEmpty ? nil : $0 }
    }

    func stateLocation() throws -> PostgresLocation? {
        try stateText.map { try PostgresLocation($0) }
    }

    func execute() async throws {
        let (host, port) = try Self.parseListen(listen)
        let level = Logger.Level(rawValue: logLevel) ?? .info
        // What can be checked is checked before the data directory is created.
        if let tlsCert, let tlsKey {
            try CohortServer.checkTLS(certificate: URL(fileURLWithPath: tlsCert), key: URL(fileURLWithPath: tlsKey))
        }
        let stateLocation = try stateLocation()
        try ListenProbe.check(host: host, port: port, as: listen)
        var limits = ServerLimits()
        limits.maxPushBytes = maxPushMB << 20
        limits.maxConcurrentTransfers = maxTransfers
        limits.tokenLifetime = tokenLifetime
        limits.identityRequestsPerMinute = identityRate
        limits.challengeLifetime = UInt16(challengeLifetime)
        if let deliveryLease { limits.deliveryLease = deliveryLease }
        var configuration = ServerConfiguration(
            dataDirectory: URL(fileURLWithPath: data, isDirectory: true), host: host, port: port, publicURL: publicURL,
            tlsCertificate: tlsCert.map { URL(fileURLWithPath: $0) }, tlsKey: tlsKey.map { URL(fileURLWithPath: $0) },
            hookBinary: URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath(),
            gitExecutable: try Self.findGit(), limits: limits
        )
        configuration.state = stateLocation
        // The default is left out, with a notice below, when DATA is too deep for a socket there.
        let socket = verifierSocket.map { URL(fileURLWithPath: $0) } ?? ServerConfiguration.defaultVerifierSocket(in: configuration.dataDirectory)
        if !noResidentVerifier, ServerConfiguration.fitsSocket(socket) { configuration.verifierSocket = socket }
        configuration.trustedProxies = trustedProxies
        configuration.sinks = CohortCommandLine.sinks
        let settings = configuration
        LoggingSystem.bootstrap { JSONLogHandler(label: $0, level: level) }
        let logger = Logger(label: "cohort.serve")
        if settings.verifierSocket == nil {
            logger.notice(noResidentVerifier ? "no resident verifier (--no-resident-verifier): each push runs a hook program started for it"
                : "no resident verifier: \(socket.path) is longer than \(ResidentVerifier.maxSocketPathBytes) bytes, so each push runs a hook program started for it (give a shorter --verifier-socket)")
        }
        let server = try await CohortServer(configuration: settings, logger: logger)
        do {
            try await server.run { boundPort in
                let shared = settings.state.map { ", state \($0)" } ?? ""
                Terminal.print("listening on \(settings.baseURL(boundPort: boundPort)) (data \(settings.dataDirectory.path)\(shared))")
            }
        } catch let error as CohortError {
            throw error
        } catch {
            throw ListenProbe.failure(error, listening: listen)
        }
        Terminal.note("cohort serve: stopped")
    }

    /// `HOST:PORT`, `[v6]:PORT` or `:PORT` (all addresses).
    static func parseListen(_ text: String) throws -> (String, Int) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            throw CohortError(.malformed, "--listen \(text.prefix(60)) is not HOST:PORT", hint: "e.g. 127.0.0.1:8377, or :8377 for every address")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host.isEmpty ? "0.0.0.0" : host, port)
    }

    static func findGit() throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/git"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw CohortError(.io, "git is not installed (not found on PATH)", hint: "install git: apt-get install git")
    }
}
