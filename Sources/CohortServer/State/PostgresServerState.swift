import CohortBase
import CohortIdentity
import CohortNotices
import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle

/// The state every instance of a server shares, in PostgreSQL (`cohort serve --state postgres://…`):
/// spent challenges, identity requests per client address and minute, and the server sinks' outbox
/// (`PostgresOutbox`). The instances share the data directory, `token.key`, `challenge.key` and
/// `--public-url`; see Docs/Server.md.
final class PostgresServerState: ServerState {
    let database: PostgresStore
    let outbox: PostgresOutbox
    let counts: SharedRequestCounts
    let spent: PostgresSpentChallenges
    /// This instance's own count, in front of the shared one: an address over the limit here costs
    /// the database nothing.
    let local: RequestLimiter
    let storeIdentity: String?
    let logger: Logger

    private init(database: PostgresStore, outbox: PostgresOutbox, perMinute: Int, local: RequestLimiter, identity: String, logger: Logger) {
        storeIdentity = identity
        self.database = database
        self.outbox = outbox
        counts = SharedRequestCounts(perMinute: perMinute) { address, count in try await Self.reserve(database, address, count) }
        self.local = local
        spent = PostgresSpentChallenges(database: database)
        self.logger = logger
    }

    /// Connects, brings the schema up to date, and reads the server sinks. A database that cannot be
    /// reached is `E_UNAVAILABLE` naming it (without its password).
    static func start(_ location: PostgresLocation, store: CollaborationStore, limits: ServerLimits, sinks: SinkRegistry,
                      limiter: RequestLimiter, logger: Logger) async throws -> PostgresServerState {
        let database = PostgresStore(location: location, logger: logger)
        database.start()
        let from: Int
        let identity: String
        do {
            try await database.probe()
            (from, identity) = try await PostgresSchema.migrate(database)
            if from < PostgresSchema.currentVersion {
                logger.notice("state store schema migrated", metadata: ["state": "\(location)", "from": "\(from)", "to": "\(PostgresSchema.currentVersion)"])
            }
        } catch let error as CohortError where error.code == .unavailable {
            database.stop()
            throw CohortError(.unavailable, "cannot reach the state store \(location)",
                              hint: "start PostgreSQL, or check --state, the password in PGPASSWORD and ?sslmode=, which is require by default off loopback; the log has the details")
        } catch let error as CohortError where error.code == .io {
            database.stop()
            throw CohortError(.io, "the state store \(location) refused this server",
                              hint: "check the user, the password in PGPASSWORD, the database's name and the user's right to create tables; the log has PostgreSQL's reason")
        } catch {
            database.stop()
            throw error
        }
        let outbox = PostgresOutbox(database: database, store: store, lease: limits.deliveryLease, registry: sinks, logger: logger)
        // Every hosted collaboration has its record before the first request: a push that lands
        // before a sweep would otherwise become its starting point, and its notices never sent.
        await outbox.sweep()
        return PostgresServerState(database: database, outbox: outbox, perMinute: limits.identityRequestsPerMinute, local: limiter,
                                   identity: identity, logger: logger)
    }

    var spentChallenges: any SpentChallengeStore { spent }

    func admitIdentityRequest(from client: String) async throws {
        let address = String(client.prefix(64))
        try local.admitIdentityRequest(from: address)
        try await counts.admit(address)
    }

    /// Adds `count` to `address`'s identity requests in the database's current minute; the new total.
    private static func reserve(_ database: PostgresStore, _ address: String, _ count: Int) async throws -> Int {
        try await database.run("counting an identity request") { connection in
            var total = 0
            for try await value in try await connection.execute(ReserveRequests(address: address, count: count), logger: database.logger) {
                total = value
            }
            return total
        }
    }

    func publishing(_ identifier: String) async throws {
        try await outbox.begin(identifier)
    }

    func pushed(_ identifier: String) {
        let outbox = outbox
        Task {
            await outbox.take(identifier)
            await outbox.deliverAll()
        }
    }

    /// Hooks deliver only each repository's own sinks: the server's are delivered from the outbox here.
    var hookEnvironment: [String: String] { [:] }

    var services: [any Service] { [PostgresWorker(state: self)] }

    /// Forgets spent challenges well past their expiry (by more than any clock skew between
    /// instances that a challenge's check allows) and request counts of past minutes.
    func cleanUp() async throws {
        let now = Int64(Date().timeIntervalSince1970) - 300
        try await database.run("cleaning up") { connection in
            try await connection.query("DELETE FROM cohort_spent_challenges WHERE expires_at < \(now)", logger: self.logger)
            try await connection.query("DELETE FROM cohort_identity_requests WHERE minute < floor(extract(epoch FROM now()) / 60)::bigint - 1",
                                       logger: self.logger)
        }
    }
}

/// Spent challenge nonces in PostgreSQL: an insert under a unique key decides who spends. The early
/// replay check (`contains`, before the proof's signature is checked) looks only at what this
/// instance spent, which costs no round trip; a challenge spent at another instance is found at the
/// spend, which refuses it as replayed all the same (after the signature and membership checks, so a
/// replay whose signer was removed meanwhile is refused for that).
final class PostgresSpentChallenges: SpentChallengeStore {
    let database: PostgresStore
    private let spentHere = MemorySpentChallenges()

    init(database: PostgresStore) {
        self.database = database
    }

    var isDurable: Bool { true }

    func contains(_ nonce: Data) -> Bool {
        spentHere.contains(nonce)
    }

    func spend(_ nonce: Data, expiresAt: UInt64, now: UInt64) async throws -> Bool {
        let statement = SpendChallenge(nonce: nonce.hexString, expiresAt: Int64(clamping: expiresAt))
        return try await database.run("spending a challenge") { connection in
            var spentNow = false
            for try await _ in try await connection.execute(statement, logger: self.database.logger) { spentNow = true }
            // Spent now or before (at another instance): either way, refused here without asking again.
            _ = self.spentHere.spend(nonce, expiresAt: expiresAt, now: now)
            return spentNow
        }
    }
}

/// The two statements every token exchange makes, prepared once per connection.
struct ReserveRequests: PostgresPreparedStatement {
    static let sql = """
        INSERT INTO cohort_identity_requests (address, minute, count)
        VALUES ($1, floor(extract(epoch FROM now()) / 60)::bigint, $2)
        ON CONFLICT (address, minute) DO UPDATE SET count = cohort_identity_requests.count + EXCLUDED.count
        RETURNING count
        """
    static let bindingDataTypes: [PostgresDataType] = [.text, .int4]
    typealias Row = Int

    var address: String
    var count: Int

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings()
        bindings.append(address)
        bindings.append(Int32(clamping: count))
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Int { Int(try row.decode(Int32.self)) }
}

struct SpendChallenge: PostgresPreparedStatement {
    static let sql = "INSERT INTO cohort_spent_challenges (nonce, expires_at) VALUES ($1, $2) ON CONFLICT (nonce) DO NOTHING RETURNING 1"
    static let bindingDataTypes: [PostgresDataType] = [.text, .int8]
    typealias Row = Int

    var nonce: String
    var expiresAt: Int64

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings()
        bindings.append(nonce)
        bindings.append(expiresAt)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Int { Int(try row.decode(Int32.self)) }
}

/// Beside the HTTP server: delivers the server sinks' notices, takes in pushes an instance missed,
/// and cleans up, until the server stops; then closes the connections.
struct PostgresWorker: Service {
    let state: PostgresServerState
    /// How often the outbox is looked at.
    static let pollInterval: Duration = .seconds(1)
    /// How often every collaboration's branches are compared with the outbox's record of them.
    static let sweepInterval: TimeInterval = 10

    func run() async throws {
        await cancelWhenGracefulShutdown {
            var lastSweep = Date()  // start() swept before the first request
            var lastCleanUp = Date.distantPast
            while !Task.isCancelled {
                if Date().timeIntervalSince(lastSweep) >= Self.sweepInterval {
                    await state.outbox.sweep()
                    lastSweep = Date()
                }
                await state.outbox.deliverAll()
                if Date().timeIntervalSince(lastCleanUp) >= 60, (try? await state.cleanUp()) != nil {
                    lastCleanUp = Date()
                }
                try? await Task.sleep(for: Self.pollInterval)
            }
        }
        await state.outbox.shutdown()
        state.database.stop()
    }
}
