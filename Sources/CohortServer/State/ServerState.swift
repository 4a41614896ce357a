import CohortIdentity
import CohortHooks
import Foundation
import ServiceLifecycle

/// What one instance of a server keeps that every instance must see: the spent challenges, the
/// identity requests per client address, and (with a shared store) the server sinks' outbox. In files
/// under `DATA/server` for one instance (`FileServerState`), or in PostgreSQL for several
/// (`PostgresServerState`, `cohort serve --state postgres://…`).
protocol ServerState: Sendable {
    /// Where spent challenge nonces are kept.
    var spentChallenges: any SpentChallengeStore { get }
    /// A name the shared store gave itself once, which challenge keys are derived from; nil for files.
    var storeIdentity: String? { get }
    /// Counts one identity request (challenge, token, publish) from `client`: `E_BUSY` over the
    /// per-minute limit.
    func admitIdentityRequest(from client: String) async throws
    /// A collaboration is about to be registered: its first push's notices count from nothing.
    func publishing(_ identifier: String) async throws
    /// A push to `identifier` has finished (landed or not).
    func pushed(_ identifier: String)
    /// What the repositories' hooks are started with.
    var hookEnvironment: [String: String] { get }
    /// What runs beside the HTTP server for as long as it does.
    var services: [any Service] { get }
}

/// One instance's state in files: spent challenges in `DATA/server/spent-challenges`, identity
/// requests counted in memory, server sinks delivered by each repository's post-receive hook.
struct FileServerState: ServerState {
    let spent: FileSpentChallenges
    let limiter: RequestLimiter
    /// `DATA/sinks.toml`, there or not: each push's post-receive reads it when it is there, so it is
    /// read anew at every push, without a restart.
    let sinksFile: URL

    init(store: CollaborationStore, limiter: RequestLimiter) throws {
        spent = try FileSpentChallenges(url: store.serverDirectory.appendingPathComponent("spent-challenges"))
        self.limiter = limiter
        sinksFile = store.sinksFileLocation
    }

    var spentChallenges: any SpentChallengeStore { spent }

    var storeIdentity: String? { nil }

    func admitIdentityRequest(from client: String) async throws {
        try limiter.admitIdentityRequest(from: client)
    }

    func publishing(_ identifier: String) async throws {}

    func pushed(_ identifier: String) {}

    var hookEnvironment: [String: String] {
        [HookInstaller.serverSinksVariable: sinksFile.path]
    }

    var services: [any Service] { [] }
}
