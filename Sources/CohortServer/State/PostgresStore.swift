import CohortIdentity
import Foundation
import Logging
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

    init(location: PostgresLocation, logger: Logger) throws {
        var configuration: PostgresClient.Configuration
        if let socket = location.socketDirectory {
            configuration = .init(unixSocketPath: "\(socket)/.s.PGSQL.\(location.port)", username: location.user,
                                  password: location.password, database: location.database)
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
        self.location = location
        self.logger = logger
        client = PostgresClient(configuration: configuration, backgroundLogger: Logger(label: "cohort.postgres", factory: { _ in SwiftLogNoOpLogHandler() }))
    }

    /// Starts the pool; `stop` ends it.
    func start() {
        let client = client
        running.withLock { $0 = Task { await client.run() } }
    }

    func stop() {
        running.withLock { $0?.cancel() }
    }

    /// Runs `body` with a connection, within `timeout`; a failure is `E_UNAVAILABLE` (our own errors
    /// pass through).
    func run<T: Sendable>(_ what: String, _ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let client = client
        return try await bounded(what) { try await client.withConnection { try await body($0) } }
    }

    /// Like `run`, inside one transaction: all or nothing.
    func transaction<T: Sendable>(_ what: String, _ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let client = client
        let logger = logger
        return try await bounded(what) {
            try await client.withConnection { connection in
                try await connection.withTransaction(logger: logger) { try await body($0) }
            }
        }
    }

    private func bounded<T: Sendable>(_ what: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        do {
            return try await Deadline.race(Self.timeout, body)
        } catch let error as CohortError {
            throw error
        } catch let error as PostgresTransactionError {
            if let inner = error.closureError as? CohortError { throw inner }
            throw unavailable(what, error)
        } catch {
            throw unavailable(what, error)
        }
    }

    private func unavailable(_ what: String, _ error: any Error) -> CohortError {
        let detail = error is Deadline.Passed ? "no answer within \(Self.timeout)" : String(reflecting: error).prefix(400)
        logger.warning("state store unavailable", metadata: ["state": "\(location)", "during": "\(what)", "error": "\(detail)"])
        return CohortError(.unavailable, "the server's state store is unavailable", hint: "try again in a few seconds")
    }
}

/// A race between some work and a clock. The work is not awaited past the deadline: it is cancelled
/// and left to end on its own, so a database that stops answering cannot hold a request.
enum Deadline {
    struct Passed: Error {}

    static func race<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let once = Once<T>()
        return try await withCheckedThrowingContinuation { continuation in
            once.set(continuation)
            let work = Task {
                do { once.resume(.success(try await body())) } catch { once.resume(.failure(error)) }
            }
            Task {
                try? await Task.sleep(for: limit)
                if once.resume(.failure(Passed())) { work.cancel() }
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
