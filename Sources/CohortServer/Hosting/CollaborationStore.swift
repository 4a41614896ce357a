import CohortBase
import CohortCollaboration
import CohortGit
import CohortHooks
import CohortIdentity
import CohortServerAPI
import CohortVerification
import Foundation

/// What the server recorded when a collaboration was published: enough to answer its link and to
/// let its owner push the first history.
public struct Registration: Codable, Sendable, Equatable {
    public var identifier: String
    public var title: String
    public var initiator: CollaborationFile.Initiator
    public var owner: CollaborationFile.Owner
    /// The collaboration's salt, base64 (clients diversify their keys with it).
    public var salt: String
    /// The genesis commit, hex.
    public var genesis: String
    public var registeredAt: Date

    public func ownerRoot() throws -> RootHash {
        try RootHash(scheme: owner.scheme, hex: owner.root)
    }
}

/// The collaborations a server hosts, as bare repositories in its data directory:
///
///     DATA/collaborations/<identifier>.git        the repository, Cohort's hooks installed
///     DATA/collaborations/<identifier>.git/cohort/registration.json
///     DATA/server/challenge.key, token.key         0600, made once
///     DATA/server/spent-challenges                 the spent-challenge log
///     DATA/sinks.toml                              optional: sinks for every collaboration
///
/// Nothing else is stored: a restart reads the same files.
public struct CollaborationStore: Sendable {
    public let dataDirectory: URL
    let hookBinary: URL
    /// The resident verifier's socket the `pre-receive` hooks ask first (`ServerConfiguration.verifierSocket`).
    let resident: URL?

    public init(dataDirectory: URL, hookBinary: URL, resident: URL? = nil) throws {
        self.dataDirectory = dataDirectory
        self.hookBinary = hookBinary
        self.resident = resident
        try AtomicFile.createDirectory(dataDirectory, mode: 0o700)
        try AtomicFile.createDirectory(collaborations, mode: 0o755)
        try AtomicFile.createDirectory(serverDirectory, mode: 0o700)
        try AtomicFile.createDirectory(incoming, mode: 0o700)
    }

    var collaborations: URL { dataDirectory.appendingPathComponent("collaborations", isDirectory: true) }
    var incoming: URL { collaborations.appendingPathComponent(".incoming", isDirectory: true) }
    public var serverDirectory: URL { dataDirectory.appendingPathComponent("server", isDirectory: true) }
    /// Where the server-wide sinks file is, whether or not there is one.
    var sinksFileLocation: URL { dataDirectory.appendingPathComponent("sinks.toml") }

    /// The repository of `identifier` (which must be hostable), whether or not it exists.
    public func repositoryURL(_ identifier: String) -> URL {
        collaborations.appendingPathComponent("\(identifier).git", isDirectory: true)
    }

    static func registrationURL(in repository: URL) -> URL {
        CohortDirectory(gitDirectory: repository).registration
    }

    /// The registration of `identifier`, or nil when the server does not host it.
    public func registration(_ identifier: String) throws -> Registration? {
        guard (try? ServerAPI.checkHostable(identifier)) != nil else { return nil }
        let url = Self.registrationURL(in: repositoryURL(identifier))
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        let data = try AtomicFile.read(url, maxBytes: 64 << 10, what: "registration")
        return try ServerAPI.decode(Registration.self, from: data, what: "registration \(url.path)")
    }

    /// Every hosted identifier, sorted.
    public func identifiers() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: collaborations.path)) ?? []
        return names.filter { $0.hasSuffix(".git") && !$0.hasPrefix(".") }.map { String($0.dropLast(4)) }.sorted()
    }

    /// The scripts the hooks were last installed with everywhere (`DATA/server/hooks`).
    var hooksStamp: URL { serverDirectory.appendingPathComponent("hooks") }

    /// Installs the hooks of every hosted repository again when this binary, the `cohort-hook` beside
    /// it, the resident verifier's socket, or this version's scripts differ from those they were
    /// installed with (`hooksStamp`): after an upgrade, a move of the binary, or `--verifier-socket` or
    /// `--no-resident-verifier` changed, each push runs the same programs as the server. A start
    /// with nothing changed reads one file and two file identities, and starts no process; a hook
    /// already as it should be is not rewritten. Returns the repositories that
    /// could not be brought up to date, with why (they are tried again at the next start).
    public func refreshHooks() -> [(identifier: String, error: any Error)] {
        let scripts = HookInstaller.scripts(binary: hookBinary, resident: resident)
        guard (try? AtomicFile.read(hooksStamp, maxBytes: 64 << 10, what: "hooks stamp")) != scripts else { return [] }
        var failed: [(String, any Error)] = []
        for identifier in identifiers() {
            do {
                _ = try HookInstaller.install(into: repositoryURL(identifier), binary: hookBinary, chain: false, resident: resident)
            } catch {
                failed.append((identifier, error))
            }
        }
        if failed.isEmpty { try? AtomicFile.write(scripts, to: hooksStamp, mode: 0o600, replacing: true) }
        return failed
    }

    /// Hosts the collaboration whose genesis `.cohort/collaboration.json` is `file`: a bare repository
    /// with Cohort's hooks, pinned to that identifier and genesis, built aside and renamed into place.
    /// Returns false when the same owner already registered the same genesis (publishing again is
    /// harmless); another registration of the identifier is `E_NOT_PERMITTED`.
    public func register(_ file: Opened<CollaborationFile>, genesis: ObjectID, now: Date = Date()) throws -> Bool {
        let collaboration = file.value
        let record = Registration(
            identifier: collaboration.identifier, title: collaboration.title, initiator: collaboration.initiator,
            owner: collaboration.owner, salt: collaboration.salt, genesis: genesis.hex, registeredAt: now
        )
        if let existing = try registration(collaboration.identifier) {
            return try Self.confirmSame(existing, record)
        }
        let staging = incoming.appendingPathComponent("\(collaboration.identifier)-\(UUID().uuidString).git", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: staging) }
        let repository = try Repository.create(at: staging, bare: true)
        try repository.setConfig(PushVerifier.identifierKey, to: collaboration.identifier)
        try repository.setConfig(PushVerifier.genesisKey, to: genesis.hex)
        // Pushes are verified by the hook; git's own fast-forward and deletion rules back it up.
        try repository.setConfig("receive.denyNonFastForwards", to: "true")
        try repository.setConfig("receive.denyDeletes", to: "true")
        try repository.setConfig("core.logAllRefUpdates", to: "true")
        _ = try HookInstaller.install(into: staging, binary: hookBinary, chain: false, resident: resident)
        try AtomicFile.createDirectory(CohortDirectory(gitDirectory: staging).url, mode: 0o700)
        try AtomicFile.write(ServerAPI.encode(record), to: Self.registrationURL(in: staging), mode: 0o644, replacing: false)
        // rename(2) of a directory onto an existing non-empty one fails: two publishers, one winner.
        guard rename(staging.path, repositoryURL(collaboration.identifier).path) == 0 else {
            if let existing = try registration(collaboration.identifier) {
                return try Self.confirmSame(existing, record)
            }
            throw CohortError(.io, "cannot move the new repository into place: \(String(cString: strerror(errno)))")
        }
        return true
    }

    private static func confirmSame(_ existing: Registration, _ record: Registration) throws -> Bool {
        guard existing.owner == record.owner, existing.genesis == record.genesis, existing.salt == record.salt else {
            throw CohortError(.notPermitted, "collaboration \(record.identifier) is already hosted here with another genesis",
                              hint: "publish from the workspace that holds its history")
        }
        return false
    }
}
