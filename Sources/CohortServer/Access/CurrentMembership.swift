import CohortBase
import CohortCollaboration
import CohortGit
import CohortIdentity
import CohortVerification
import Foundation
import Synchronization

/// Who may do what in one hosted collaboration right now: the membership at the tip of its default
/// branch (verified by the hook when it was pushed), or, before the first push, its owner alone.
public struct CurrentMembership: Sendable, RootDirectory {
    public let registration: Registration
    /// The commit the membership was read from; nil before the first push.
    public let head: ObjectID?
    public let title: String
    public let initiator: CollaborationFile.Initiator
    let permissions: [RootHash: Permission]
    let revoked: Set<RootHash>

    public var activeCount: Int { permissions.count }

    public func status(of root: RootHash) -> RootStatus? {
        if permissions[root] != nil { return .active }
        return revoked.contains(root) ? .revoked : nil
    }

    /// The permission of an active participant; `E_REVOKED` or `E_UNKNOWN_ROOT` otherwise.
    public func permission(of root: RootHash) throws -> Permission {
        if let permission = permissions[root] { return permission }
        if revoked.contains(root) {
            throw CohortError(.revoked, "root \(root.hex.prefix(16))… was removed from this collaboration",
                              hint: "ask the owner to add you again")
        }
        throw CohortError(.unknownRoot, "root \(root.hex.prefix(16))… is not a participant of this collaboration",
                          hint: "ask the owner to add your identity card")
    }
}

/// Reads `CurrentMembership` for hosted collaborations: per request only the branch tip is read; the
/// membership is read again only when it moved.
public final class MembershipReader: Sendable {
    let store: CollaborationStore
    private let cache = Mutex<[String: CurrentMembership]>([:])

    public init(store: CollaborationStore) {
        self.store = store
    }

    /// The membership of `identifier` now; `E_NOT_FOUND` when it is not hosted here.
    public func current(_ identifier: String) throws -> CurrentMembership {
        // A registration is written once, when the collaboration is published, and never changes.
        let cached = cache.withLock { $0[identifier] }
        guard let registration = try cached?.registration ?? store.registration(identifier) else {
            throw CohortError(.notFound, "this server does not host collaboration \(identifier.prefix(64))",
                              hint: "check the link, or ask its owner to `cohort publish` it here")
        }
        let repository = try Repository(at: store.repositoryURL(identifier))
        let branch = (try? repository.headBranch()) ?? CohortLayout.defaultBranch
        let head = try repository.resolve(branch)
        if let cached, cached.head == head { return cached }
        let membership: CurrentMembership
        if let head {
            let state = try HistoryVerifier(repository: repository).state(at: head)
            var permissions: [RootHash: Permission] = [:]
            for participant in state.membership.participants {
                permissions[try participant.rootHash()] = participant.permission
            }
            let revoked = Set(try state.membership.removed.map { try RootHash(scheme: $0.scheme, hex: $0.root) })
            membership = CurrentMembership(registration: registration, head: head, title: state.collaboration.title,
                                           initiator: state.collaboration.initiator, permissions: permissions,
                                           revoked: revoked.subtracting(permissions.keys))
        } else {
            membership = CurrentMembership(registration: registration, head: nil, title: registration.title,
                                           initiator: registration.initiator,
                                           permissions: [try registration.ownerRoot(): .readWrite], revoked: [])
        }
        cache.withLock { $0[identifier] = membership }
        return membership
    }
}
