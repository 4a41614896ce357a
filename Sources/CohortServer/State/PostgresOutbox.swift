import CohortBase
import CohortGit
import CohortPostReceive
import CohortNotices
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// The server sinks' outbox in PostgreSQL, shared by every instance.
///
/// - **Taking notices in.** After a push, the instance that served it compares the collaboration's
///   branch tips with those recorded in `cohort_collaborations` and takes the notices of the new
///   commits into `cohort_notices`, in one transaction under an advisory lock, so sequence numbers
///   are given out in commit order and never reused. Every instance also sweeps every collaboration
///   every few seconds, so a push whose instance died before this step is taken in all the same. A
///   collaboration first seen by a sweep (hosted before the database was) starts from its tips as
///   they are: its history is not sent again.
/// - **Delivering.** Each sink has one row in `cohort_sinks`: its cursor and a lease. One instance
///   at a time holds a sink's lease and delivers in order, moving the cursor after each notice; the
///   lease is renewed while it works. When that instance dies, the lease runs out and another one
///   carries on from the cursor: a notice in flight then is sent again (at least once), none is
///   skipped. A sink added later starts from the outbox's end, or with `history = "all"` at its start.
final class PostgresOutbox: Sendable {
    let database: PostgresStore
    let store: CollaborationStore
    let lease: Int
    let registry: SinkRegistry
    let logger: Logger
    /// This instance, as leases name it.
    let instance: String
    private let sinks = Mutex<LoadedSinks>(LoadedSinks())
    /// Sinks this instance is delivering to now.
    private let delivering = Mutex<Set<String>>([])
    /// Sinks whose row this instance made or found.
    private let recorded = Mutex<Set<String>>([])
    /// The tips last taken in, per collaboration, so that a sweep only writes what changed.
    private let known = Mutex<[String: String]>([:])

    private struct LoadedSinks: @unchecked Sendable {
        /// Whether `DATA/sinks.toml` was read yet, and its stamp then (nil: there was none).
        var read = false
        var stamp: FileStamp?
        var sinks: [any NoticeSink] = []
        /// The sinks that asked for every notice the database holds.
        var everything: Set<String> = []
    }

    init(database: PostgresStore, store: CollaborationStore, lease: Int, registry: SinkRegistry, logger: Logger) {
        self.database = database
        self.store = store
        self.lease = lease
        self.registry = registry
        self.logger = logger
        instance = "\(ProcessInfo.processInfo.hostName):\(getpid()):\(UUID().uuidString.prefix(8).lowercased())"
    }

    // MARK: Taking notices in

    /// Records a collaboration about to be published: a new one with an empty history, so that its
    /// first push's notices are all taken in; one already hosted (published again) as it is.
    func begin(_ identifier: String) async throws {
        let url = store.repositoryURL(identifier)
        let tips = FileManager.default.fileExists(atPath: url.path) ? try Self.tips(of: url) : ""
        try await database.run("recording a new collaboration") { connection in
            try await connection.query("INSERT INTO cohort_collaborations (identifier, tips) VALUES (\(identifier), \(tips)) ON CONFLICT (identifier) DO NOTHING",
                                       logger: self.logger)
        }
    }

    /// Takes in the notices of `identifier`'s new commits; a failure is logged and left to the next sweep.
    func take(_ identifier: String) async {
        do {
            try await takeIn(identifier)
        } catch {
            logger.warning("notices not taken in yet", metadata: ["collaboration": "\(identifier)", "error": "\(error)"])
        }
    }

    /// Every hosted collaboration whose branches moved since this instance last looked.
    func sweep() async {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: store.collaborations.path)) ?? []
        for name in names where name.hasSuffix(".git") && !name.hasPrefix(".") {
            let identifier = String(name.dropLast(4))
            guard let tips = try? Self.tips(of: store.repositoryURL(identifier)) else { continue }
            if known.withLock({ $0[identifier] }) == tips { continue }
            await take(identifier)
        }
    }

    /// `refs/heads/*` as `name id` lines, sorted.
    static func tips(of repositoryURL: URL) throws -> String {
        let repository = try Repository(at: repositoryURL)
        return try repository.referenceTips().filter { $0.key.hasPrefix("refs/heads/") }
            .map { "\($0.key) \($0.value.hex)" }.sorted().joined(separator: "\n")
    }

    /// The lines of `tips` whose whole history the verification core accepts (what the hook remembered
    /// is not checked again). A branch it refuses was written past the hook (a ref the hook never
    /// saw): it is left out and logged, so that none of its notices goes out.
    private func accepted(_ tips: String, in repository: Repository, of identifier: String) -> String {
        tips.split(separator: "\n").filter { line in
            guard let hex = line.split(separator: " ").last, let tip = try? ObjectID(hex: String(hex)) else { return false }
            do {
                _ = try repository.verifyHistory(to: tip)
                return true
            } catch {
                logger.error("a branch fails verification; its notices are not sent",
                             metadata: ["collaboration": "\(identifier)", "branch": "\(line.split(separator: " ").first ?? "")", "error": "\(error)"])
                return false
            }
        }.joined(separator: "\n")
    }

    /// Takes in `identifier`'s new notices. The history is read outside the transaction, after the
    /// recorded tips (branches only move forward, so what is read is never older than the record);
    /// inside it, under the lock that orders the outbox, the recorded tips are read again and the
    /// notices go in only if nobody took this step meanwhile (otherwise it starts over).
    private func takeIn(_ identifier: String) async throws {
        let url = store.repositoryURL(identifier)
        guard FileManager.default.fileExists(atPath: url.path) else { return }
        let logger = logger
        for _ in 0..<3 {
            let recorded = try await database.run("reading a collaboration's record") { connection -> String? in
                var recorded: String?
                for try await tips in try await connection.query("SELECT tips FROM cohort_collaborations WHERE identifier = \(identifier)",
                                                                 logger: logger).decode(String.self) {
                    recorded = tips
                }
                return recorded
            }
            let all = try Self.tips(of: url)
            let repository = try Repository(at: url)
            let current = accepted(all, in: repository, of: identifier)
            if recorded == current {
                // Nothing moved that counts: no transaction, no lock.
                known.withLock { $0[identifier] = all }
                return
            }
            let notices: [NoticeDelivery] = if let recorded {
                try Self.notices(in: repository, tips: current, since: recorded)
            } else {
                []
            }
            let done = try await database.transaction("taking notices in", within: .seconds(30)) { connection -> Bool in
                try await connection.query("SELECT pg_advisory_xact_lock(\(PostgresSchema.noticeLock))", logger: logger)
                var now: String?
                for try await tips in try await connection.query("SELECT tips FROM cohort_collaborations WHERE identifier = \(identifier) FOR UPDATE",
                                                                 logger: logger).decode(String.self) {
                    now = tips
                }
                guard now == recorded else { return false }
                guard let recorded else {
                    // First seen here (hosted before the database was): start from now, without
                    // sending its history again.
                    try await connection.query("INSERT INTO cohort_collaborations (identifier, tips) VALUES (\(identifier), \(current))", logger: logger)
                    return true
                }
                try await Self.append(notices, collaboration: identifier, on: connection, logger: logger)
                try await connection.query("UPDATE cohort_collaborations SET tips = \(current), updated_at = now() WHERE identifier = \(identifier)",
                                           logger: logger)
                return true
            }
            if done {
                // What was looked at, refused branches included: a sweep looks again only when a
                // branch moves.
                known.withLock { $0[identifier] = all }
                return
            }
        }
        logger.warning("notices not taken in yet: other instances kept taking this collaboration's in first; the next sweep tries again",
                       metadata: ["collaboration": "\(identifier)"])
    }

    /// The notices of the commits reachable from `tips` and from none of the tips recorded before.
    private static func notices(in repository: Repository, tips: String, since recorded: String) throws -> [NoticeDelivery] {
        func ids(_ text: String) -> [ObjectID] {
            text.split(separator: "\n").compactMap { line in line.split(separator: " ").last.flatMap { try? ObjectID(hex: String($0)) } }
        }
        let old = ids(recorded).filter { repository.contains($0) }
        let commits = try repository.commits(fromAll: ids(tips), hiding: old)
        return try PostReceiveHook.noticesAdded(by: commits, in: repository)
    }

    private static func append(_ notices: [NoticeDelivery], collaboration: String,
                               on connection: PostgresConnection, logger: Logger) async throws {
        guard !notices.isEmpty else { return }
        var present = Set<String>()
        for try await id in try await connection.query(
            "SELECT notice_id FROM cohort_notices WHERE collaboration = \(collaboration) AND notice_id = ANY(\(notices.map(\.notice.id)))",
            logger: logger).decode(String.self) {
            present.insert(id)
        }
        var last: Int64 = 0
        for try await value in try await connection.query("SELECT coalesce(max(seq), 0)::bigint FROM cohort_notices", logger: logger).decode(Int64.self) {
            last = value
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        let fresh = notices.filter { !present.contains($0.notice.id) }
        for start in stride(from: 0, to: fresh.count, by: 2000) {
            let chunk = fresh[start..<min(start + 2000, fresh.count)]
            let seqs = chunk.indices.map { last + Int64($0 + 1) }
            let ids = chunk.map(\.notice.id)
            let entries = try chunk.map { String(decoding: try encoder.encode($0), as: UTF8.self) }
            try await connection.query("""
                INSERT INTO cohort_notices (seq, collaboration, notice_id, entry)
                SELECT s, \(collaboration), i, e FROM unnest(\(seqs)::bigint[], \(ids)::text[], \(entries)::text[]) AS t(s, i, e)
                ON CONFLICT (collaboration, notice_id) DO NOTHING
                """, logger: logger)
        }
    }

    // MARK: Delivering

    /// Delivers to every server sink this instance can take the lease of.
    func deliverAll() async {
        let current = loadSinks()
        await withTaskGroup(of: Void.self) { group in
            for sink in current {
                group.addTask { await self.deliver(to: sink) }
            }
        }
    }

    /// The sinks of `DATA/sinks.toml`, built again when the file changes (no restart needed).
    private func loadSinks() -> [any NoticeSink] {
        let url = store.sinksFileLocation
        let stamp = FileStamp(url)
        let (changed, old): (Bool, [any NoticeSink]) = sinks.withLock { loaded in
            guard !loaded.read || loaded.stamp != stamp else { return (false, []) }
            return (true, loaded.sinks)
        }
        guard changed else { return sinks.withLock { $0.sinks } }
        var built: [any NoticeSink] = []
        var everything: Set<String> = []
        if stamp != nil {
            do {
                let state = store.serverDirectory.appendingPathComponent("sinks", isDirectory: true)
                let specs = try SinkConfiguration.load(url, registry: registry)
                for spec in specs {
                    // A sink that cannot start stays out until the file changes; the others go on.
                    do {
                        built.append(try spec.make(stateDirectory: state))
                    } catch {
                        logger.error("server sink cannot start", metadata: ["sink": "\(spec.name)", "error": "\(error)"])
                    }
                }
                everything = Set(specs.filter { $0.history == .all }.map(\.name))
            } catch {
                // The file is kept as it was until it reads well: a typo does not stop delivery.
                logger.error("server sinks not reloaded", metadata: ["file": "\(url.path)", "error": "\(error)"])
                sinks.withLock { $0.read = true; $0.stamp = stamp }
                return old
            }
        }
        sinks.withLock { $0 = LoadedSinks(read: true, stamp: stamp, sinks: built, everything: everything) }
        for sink in old { Task { await sink.shutdown() } }
        guard !(built.isEmpty && old.isEmpty) else { return built }
        logger.notice("server sinks loaded", metadata: ["file": "\(url.path)", "sinks": "\(built.map(\.name).joined(separator: ", "))"])
        return built
    }

    func shutdown() async {
        let current = sinks.withLock { $0.sinks }
        for sink in current { await sink.shutdown() }
    }

    /// Delivers `sink`'s pending notices in order while this instance holds its lease. The lease is
    /// named by a token of this run alone (a fence): a late write from an older run of this or any
    /// instance changes nothing.
    private func deliver(to sink: any NoticeSink) async {
        let name = sink.name
        guard delivering.withLock({ $0.insert(name).inserted }) else { return }
        defer { delivering.withLock { _ = $0.remove(name) } }
        let lease = "\(instance)/\(UUID().uuidString.prefix(8).lowercased())"
        var retryAfter: Duration?
        var reason: String?
        do {
            if !recorded.withLock({ $0.contains(name) }) {
                try await record(name, fromStart: sinks.withLock { $0.everything.contains(name) })
                recorded.withLock { _ = $0.insert(name) }
            }
            guard var cursor = try await acquire(name, lease: lease) else { return }
            // What the instance that held the lease before left: a webhook's retries, a disabled endpoint.
            try (sink as? any StatefulNoticeSink)?.reload()
            delivery: while true {
                let batch = try await pending(after: cursor)
                if batch.isEmpty { break }
                for (seq, stored) in batch {
                    do {
                        guard let stored else { throw SinkFailure.giveUp("the stored notice cannot be read by this version of Cohort") }
                        try await renewingLease(name, lease) {
                            try await sink.deliver(stored)
                        }
                    } catch let failure as SinkFailure where failure.kind == .giveUp {
                        logger.warning("sink gave up on a notice", metadata: ["sink": "\(name)", "seq": "\(seq)", "reason": "\(failure.reason)"])
                        try await recordFailure(name, seq: seq, reason: failure.reason)
                    } catch let error as CohortError where error.code == .unavailable {
                        throw error
                    } catch {
                        retryAfter = .seconds(5)
                        if let failure = error as? SinkFailure, case .retryLater(let wait?) = failure.kind { retryAfter = max(wait, .seconds(1)) }
                        reason = "\(error)"
                        logger.warning("sink delivery failed, retried later", metadata: ["sink": "\(name)", "seq": "\(seq)", "error": "\(error)"])
                        break delivery
                    }
                    guard try await advance(name, lease: lease, to: seq) else {
                        logger.warning("sink lease lost", metadata: ["sink": "\(name)", "seq": "\(seq)"])
                        return
                    }
                    cursor = seq
                }
            }
            try await release(name, lease: lease, error: reason, retryAfter: retryAfter)
        } catch {
            logger.warning("server sink not delivered", metadata: ["sink": "\(name)", "error": "\(error)"])
            try? await release(name, lease: lease, error: "\(error)", retryAfter: .seconds(5))
        }
    }

    /// Makes `sink`'s row when it has none: a new sink starts at the outbox's end, so it receives what
    /// comes from now on, or with `history = "all"` at its start, every notice the database holds.
    private func record(_ sink: String, fromStart: Bool) async throws {
        try await database.run("recording a sink") { connection in
            if fromStart {
                try await connection.query("INSERT INTO cohort_sinks (name, cursor) VALUES (\(sink), 0) ON CONFLICT (name) DO NOTHING",
                                           logger: self.logger)
            } else {
                try await connection.query("""
                    INSERT INTO cohort_sinks (name, cursor) SELECT \(sink), coalesce(max(seq), 0) FROM cohort_notices
                    ON CONFLICT (name) DO NOTHING
                    """, logger: self.logger)
            }
        }
    }

    /// Takes `sink`'s lease when no live run holds it and its retry time has come; returns the cursor, or nil.
    private func acquire(_ sink: String, lease: String) async throws -> Int64? {
        try await database.run("taking a sink's lease") { connection in
            // Taken only with something to deliver: an idle sink costs one query a second.
            let rows = try await connection.query("""
                UPDATE cohort_sinks SET holder = \(lease), held_until = now() + make_interval(secs => \(self.lease)), updated_at = now()
                WHERE name = \(sink) AND (holder IS NULL OR held_until < now()) AND (not_before IS NULL OR not_before <= now())
                  AND cursor < (SELECT coalesce(max(seq), 0) FROM cohort_notices)
                RETURNING cursor
                """, logger: self.logger)
            var cursor: Int64?
            for try await value in rows.decode(Int64.self) { cursor = value }
            return cursor
        }
    }

    /// Up to 100 notices after `cursor`, in order; nil for an entry this version cannot read.
    private func pending(after cursor: Int64) async throws -> [(Int64, NoticeDelivery?)] {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let rows = try await database.run("reading the outbox") { connection in
            var rows: [(Int64, String)] = []
            for try await row in try await connection.query("SELECT seq, entry FROM cohort_notices WHERE seq > \(cursor) ORDER BY seq LIMIT 100",
                                                            logger: self.logger).decode((Int64, String).self) {
                rows.append(row)
            }
            return rows
        }
        return rows.map { seq, text in (seq, try? decoder.decode(NoticeDelivery.self, from: Data(text.utf8))) }
    }

    /// Moves `sink`'s cursor to `seq` and renews the lease; false when the lease is no longer this run's.
    private func advance(_ sink: String, lease: String, to seq: Int64) async throws -> Bool {
        try await database.run("moving a sink's cursor") { connection in
            let rows = try await connection.query("""
                UPDATE cohort_sinks SET cursor = \(seq), held_until = now() + make_interval(secs => \(self.lease)), last_error = NULL, updated_at = now()
                WHERE name = \(sink) AND holder = \(lease) RETURNING name
                """, logger: self.logger)
            for try await _ in rows { return true }
            return false
        }
    }

    /// Gives the lease back; after a failure, no instance tries the sink again before `retryAfter`.
    private func release(_ sink: String, lease: String, error: String?, retryAfter: Duration?) async throws {
        let reason = error.map { String($0.prefix(500)) }
        let wait = Double(retryAfter?.components.seconds ?? 0)
        try await database.run("releasing a sink's lease") { connection in
            try await connection.query("""
                UPDATE cohort_sinks SET holder = NULL, held_until = NULL, last_error = \(reason),
                    not_before = CASE WHEN \(wait) > 0 THEN now() + make_interval(secs => \(wait)) END, updated_at = now()
                WHERE name = \(sink) AND holder = \(lease)
                """, logger: self.logger)
        }
    }

    private func recordFailure(_ sink: String, seq: Int64, reason: String) async throws {
        let reason = String(reason.prefix(500))
        try await database.run("recording a delivery failure") { connection in
            try await connection.query("""
                INSERT INTO cohort_delivery_failures (sink, seq, reason) VALUES (\(sink), \(seq), \(reason))
                ON CONFLICT (sink, seq) DO UPDATE SET reason = EXCLUDED.reason, failed_at = now()
                """, logger: self.logger)
        }
    }

    /// Runs `body` while renewing `sink`'s lease every third of its length, so that a slow delivery
    /// keeps it.
    private func renewingLease<T: Sendable>(_ sink: String, _ token: String, _ body: @Sendable () async throws -> T) async throws -> T {
        let renewal = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(max(1, lease / 3)))
                if Task.isCancelled { break }
                _ = try? await database.run("renewing a sink's lease") { connection in
                    try await connection.query("""
                        UPDATE cohort_sinks SET held_until = now() + make_interval(secs => \(self.lease))
                        WHERE name = \(sink) AND holder = \(token)
                        """, logger: self.logger)
                }
            }
        }
        defer { renewal.cancel() }
        return try await body()
    }
}
