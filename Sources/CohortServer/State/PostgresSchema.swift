import CohortBase
import PostgresNIO

/// The shared state's tables, created and migrated by the server itself. Each migration runs in its
/// own transaction under an advisory lock, so instances starting together migrate once; a database
/// migrated by a newer Cohort is refused rather than written in an older shape.
enum PostgresSchema {
    /// The advisory lock migrations hold.
    static let migrationLock: Int64 = 0x436F_686F_7274_0001
    /// The advisory lock that orders notices as they are taken into the outbox.
    static let noticeLock: Int64 = 0x436F_686F_7274_0002

    /// Migration N (1-based) brings the schema from version N-1 to N.
    static let migrations: [[String]] = [
        [
            // The store's own name, made once: instances derive their challenge key from it.
            "CREATE TABLE cohort_store (identity text NOT NULL)",
            "INSERT INTO cohort_store (identity) VALUES (gen_random_uuid()::text)",
            // Spent challenge nonces (hex), each kept until its challenge expires (seconds since 1970):
            // the unique key decides which of two concurrent answers spends it.
            "CREATE TABLE cohort_spent_challenges (nonce text PRIMARY KEY, expires_at bigint NOT NULL)",
            "CREATE INDEX cohort_spent_challenges_expiry ON cohort_spent_challenges (expires_at)",
            // Identity requests per client address and minute (the database's clock). Unlogged: a
            // count is worth no disk write, and a crash of the database only forgets this minute's.
            "CREATE UNLOGGED TABLE cohort_identity_requests (address text NOT NULL, minute bigint NOT NULL, count integer NOT NULL, PRIMARY KEY (address, minute))",
            // Each collaboration's branch tips as of the last time its notices were taken in.
            "CREATE TABLE cohort_collaborations (identifier text PRIMARY KEY, tips text NOT NULL, updated_at timestamptz NOT NULL DEFAULT now())",
            // The server sinks' outbox: notices in the order they were taken in.
            "CREATE TABLE cohort_notices (seq bigint PRIMARY KEY, collaboration text NOT NULL, notice_id text NOT NULL, entry text NOT NULL, accepted_at timestamptz NOT NULL DEFAULT now(), UNIQUE (collaboration, notice_id))",
            // Each server sink's place in the outbox, which run of which instance delivers to it until
            // when, and after a failure, when it may be tried again.
            "CREATE TABLE cohort_sinks (name text PRIMARY KEY, cursor bigint NOT NULL, holder text, held_until timestamptz, not_before timestamptz, last_error text, updated_at timestamptz NOT NULL DEFAULT now())",
            // Notices a sink gave up on.
            "CREATE TABLE cohort_delivery_failures (sink text NOT NULL, seq bigint NOT NULL, reason text NOT NULL, failed_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (sink, seq))",
        ],
    ]

    static var currentVersion: Int { migrations.count }

    /// Brings the database to `currentVersion`; returns the version it was at and the store's name.
    static func migrate(_ store: PostgresStore) async throws -> (from: Int, identity: String) {
        try await store.transaction("migrating the schema") { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(migrationLock))", logger: store.logger)
            try await connection.query("CREATE TABLE IF NOT EXISTS cohort_schema (version integer NOT NULL)", logger: store.logger)
            var found: Int?
            for try await version in try await connection.query("SELECT version FROM cohort_schema", logger: store.logger).decode(Int.self) {
                found = version
            }
            let from = found ?? 0
            if found == nil {
                try await connection.query("INSERT INTO cohort_schema (version) VALUES (0)", logger: store.logger)
            }
            guard from <= currentVersion else {
                throw CohortError(.malformed, "the state store's schema is version \(from); this cohort knows versions up to \(currentVersion)",
                                  hint: "run the same Cohort version on every instance (upgrade this one)")
            }
            for (index, statements) in migrations.enumerated().dropFirst(from) {
                for statement in statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: store.logger)
                }
                try await connection.query("UPDATE cohort_schema SET version = \(index + 1)", logger: store.logger)
            }
            var identity = ""
            for try await value in try await connection.query("SELECT identity FROM cohort_store", logger: store.logger).decode(String.self) {
                identity = value
            }
            return (from, identity)
        }
    }
}
