import CohortBase
import Foundation
import Logging
import NIOCore
import NIOSSL
import PostgresNIO
import Synchronization

/// The connection pool to the shared state database, and the one way every query goes through it:
/// bounded in time, and any failure of the database turned into `E_UNAVAILABLE` (HTTP 503 with
/// `Retry-After`), its details in the log. Nothing waits longer than `timeout` for PostgreSQL.
final class PostgresStore: Sendable {
    /// Longest wait for one operation (a connection and its queries).
    static let timeout: Duration = .seconds(5)

    let client: PostgresClient
    let location: PostgresLocation
    let logger: Logger
    private let running: Mutex<Task<Void, Never>?> = Mutex(nil)

    init(location: PostgresLocation, logger: Logger) {
        var configuration: PostgresClient.Configuration
        if let socket = location.socketPath {
            configuration = .init(unixSocketPath: socket, username: location.user, password: location.password, database: location.database)
        } else {
            let tls: PostgresClient.Configuration.TLS
            switch location.tls {
            case .disable: tls = .disable
            case .prefer: tls = .prefer(.makeClientConfiguration())
            case .require: tls = .require(.makeClientConfiguration())
            }
            configuration = .init(host: location.host ?? "localhost", port: location.port, username: location.user,
                                  password: location.password, database: location.database, tls: tls)
        }
        configuration.options.connectTimeout = .seconds(3)
        configuration.options.maximumConnections = 16
        // The database gives up too, so a query whose caller stopped waiting cannot hold a lock or a
        // transaction for long.
        configuration.options.additionalStartupParameters = Self.sessionSettings
        self.location = location
        self.logger = logger
        client = PostgresClient(configuration: configuration, backgroundLogger: Self.quiet)
    }

    static let sessionSettings = [("statement_timeout", "10s"), ("lock_timeout", "10s"), ("idle_in_transaction_session_timeout", "30s")]
    static let quiet = Logger(label: "cohort.postgres", factory: { _ in SwiftLogNoOpLogHandler() })

    /// One connection made directly, at start, and closed: the pool retries a refused password or a
    /// missing database quietly until the deadline, this says which it was.
    func probe() async throws {
        var configuration: PostgresConnection.Configuration
        if let socket = location.socketPath {
            configuration = .init(unixSocketPath: socket, username: location.user, password: location.password, database: location.database)
        } else {
            let tls: PostgresConnection.Configuration.TLS
            switch location.tls {
            case .disable: tls = .disable
            case .prefer: tls = .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
            case .require: tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
            configuration = .init(host: location.host ?? "localhost", port: location.port, username: location.user,
                                  password: location.password, database: location.database, tls: tls)
        }
        configuration.options.connectTimeout = .seconds(3)
        configuration.options.additionalStartupParameters = Self.sessionSettings
        let settings = configuration
        do {
            let connection = try await Deadline.race(Self.timeout) {
                try await PostgresConnection.connect(configuration: settings, id: 0, logger: Self.quiet)
            }
            try? await connection.close()
        } catch {
            throw classify(error, "connecting")
        }
    }

    /// Starts the pool; `stop` ends it.
    func start() {
        let client = client
        running.withLock { $0 = Task { await client.run() } }
    }

    func stop() {
        running.withLock { $0?.cancel() }
    }

    /// Runs `body` with a connection, within `limit`; a failure of the database is `E_UNAVAILABLE`,
    /// our own errors pass through. When the deadline passes, the connection is closed under the
    /// query, so it cannot finish later or hold a place in the pool.
    @discardableResult
    func run<T: Sendable>(_ what: String, within limit: Duration = timeout,
                          _ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let client = client
        let leased = Mutex<PostgresConnection?>(nil)
        do {
            return try await Deadline.race(limit, onTimeout: {
                if let connection = leased.withLock({ $0 }) {
                    let _: EventLoopFuture<Void> = connection.close()
                }
            }) {
                try await client.withConnection { connection in
                    leased.withLock { $0 = connection }
                    return try await body(connection)
                }
            }
        } catch {
            throw classify(error, what)
        }
    }

    /// Like `run`, inside one transaction: all or nothing.
    func transaction<T: Sendable>(_ what: String, within limit: Duration = timeout,
                                  _ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let logger = logger
        return try await run(what, within: limit) { connection in
            try await connection.withTransaction(logger: logger) { try await body($0) }
        }
    }

    /// `E_UNAVAILABLE` for what passes (the database down, restarting, overloaded, too slow, a lock
    /// or serialization conflict); anything else is a failure of ours or of the database's setup
    /// (`E_IO`, logged as an error), so that a client is not told to retry what never will work.
    private func classify(_ error: any Error, _ what: String) -> any Error {
        var error = error
        if let transaction = error as? PostgresTransactionError {
            error = transaction.closureError ?? transaction.beginError ?? transaction.commitError ?? transaction
        }
        if error is CohortError { return error }
        if let failure = error as? PSQLError, let state = failure.serverInfo?[.sqlState] {
            let passing = ["08", "53", "57P", "40001", "40P01", "55P03", "57014"].contains { state.hasPrefix($0) }
            if !passing {
                let message = failure.serverInfo?[.message] ?? ""
                logger.error("state store refused a query", metadata: ["during": "\(what)", "sqlstate": "\(state)", "error": "\(message.prefix(300))"])
                return CohortError(.io, "the server's state store refused \(what)",
                                   hint: "try again later; if it lasts, tell the server's operator (its log has the details)")
            }
        }
        let detail = error is Deadline.Passed ? "no answer within the time allowed" : String(reflecting: error).prefix(400)
        logger.warning("state store unavailable", metadata: ["state": "\(location)", "during": "\(what)", "error": "\(detail)"])
        return CohortError(.unavailable, "the server's state store is unavailable", hint: "try again in a few seconds")
    }
}

/// A race between some work and a clock. The work is not awaited past the deadline: it is cancelled
/// and left to end on its own, so a database that stops answering cannot hold a request.
enum Deadline {
    struct Passed: Error {}

    static func race<T: Sendable>(_ limit: Duration, onTimeout: @escaping @Sendable () -> Void = {},
                                  _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let once = Once<T>()
        return try await withCheckedThrowingContinuation { continuation in
            once.set(continuation)
            let timer = Mutex<Task<Void, Never>?>(nil)
            let work = Task {
                let result: Result<T, any Error>
                do { result = .success(try await body()) } catch { result = .failure(error) }
                if once.resume(result) { timer.withLock { $0?.cancel() } }
            }
            timer.withLock { timer in
                timer = Task {
                    try? await Task.sleep(for: limit)
                    guard !Task.isCancelled else { return }
                    if once.resume(.failure(Passed())) {
                        onTimeout()
                        work.cancel()
                    }
                }
            }
        }
    }

    private final class Once<T: Sendable>: Sendable {
        private let state = Mutex<(CheckedContinuation<T, any Error>?, Result<T, any Error>?, Bool)>((nil, nil, false))

        func set(_ continuation: CheckedContinuation<T, any Error>) {
            let early = state.withLock { state -> Result<T, any Error>? in
                if let result = state.1 { return result }
                state.0 = continuation
                return nil
            }
            if let early { continuation.resume(with: early) }
        }

        /// Resumes once; true for the first caller.
        @discardableResult
        func resume(_ result: Result<T, any Error>) -> Bool {
            let (first, continuation) = state.withLock { state -> (Bool, CheckedContinuation<T, any Error>?) in
                guard !state.2 else { return (false, nil) }
                state.2 = true
                if let continuation = state.0 { return (true, continuation) }
                state.1 = result
                return (true, nil)
            }
            continuation?.resume(with: result)
            return first
        }
    }
}
