import CohortBase
import CohortCollaboration
import CohortGit
import CohortIdentity
import Foundation

/// One line of git's `pre-receive` input: `old new ref`.
public struct RefUpdate: Hashable, Sendable {
    public let old: ObjectID
    public let new: ObjectID
    public let name: String

    public init(old: ObjectID, new: ObjectID, name: String) {
        self.old = old
        self.new = new
        self.name = name
    }

    /// Parses `OLD NEW REF` (40-digit ids; zeros for "none").
    public init(line: Substring) throws {
        let fields = line.split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 3, fields[2].utf8.count <= 1024 else {
            throw CohortError(.malformed, "pre-receive input line is not 'OLD NEW REF'")
        }
        try self.init(old: ObjectID(hex: String(fields[0])), new: ObjectID(hex: String(fields[1])), name: String(fields[2]))
    }

    public var isDeletion: Bool { new.isZero }
    public var isCreation: Bool { old.isZero }
}

/// Why one ref update is refused: the commit (or ref target) at fault, and the error with its code.
public struct PushRejection: Sendable, CustomStringConvertible {
    public let commit: ObjectID
    public let ref: String
    public let error: CohortError

    /// `rejected SHA (REF): CODE: reason`.
    public var description: String {
        "rejected \(commit.hex) (\(ref)): \(error.code): \(error.reason.replacingOccurrences(of: "\n", with: " "))"
    }
}

/// Bounds on what one push may ask the verifier to do.
public struct PushLimits: Sendable {
    /// New commits in one push.
    public var maxCommits: Int
    /// Ref updates in one push.
    public var maxUpdates: Int
    /// Wall-clock seconds for the whole verification.
    public var maxSeconds: Double

    /// What a pusher past `maxUpdates` (or past the hook's input limit) does.
    public static let tooManyUpdatesHint = "push fewer branches and tags at once"

    public init(maxCommits: Int = 200_000, maxUpdates: Int = 1000, maxSeconds: Double = 600) {
        self.maxCommits = maxCommits
        self.maxUpdates = maxUpdates
        self.maxSeconds = maxSeconds
    }
}

/// The rules of a push, on top of the rules of each commit: only branches and tags; the default branch
/// is never deleted or rewound; every commit the push makes reachable and no ref had before is
/// verified; a new branch descends from the verified history; a repository keeps its collaboration.
public final class PushVerifier {
    /// Git configuration that pins an empty repository to one collaboration (set by `cohort serve`).
    public static let identifierKey = "cohort.identifier"
    public static let genesisKey = "cohort.genesis"

    public let repository: Repository
    public let limits: PushLimits

    public init(repository: Repository, limits: PushLimits = PushLimits()) {
        self.repository = repository
        self.limits = limits
    }

    /// Branches and tags: the only refs a push may write, and the only ones whose tips can count as verified.
    static func isPushable(_ name: String) -> Bool {
        name.hasPrefix("refs/heads/") || name.hasPrefix("refs/tags/")
    }

    /// Every commit new to the repository, on any branch or tag, must be signed by a participant of
    /// the default branch's membership as it is now (or as this push leaves it), with write
    /// permission unless the commit only replaces its read-only signer's own root. The history rules
    /// check each commit against its own parents, which its signer chose: this is what stops a
    /// removed participant from pushing work built on a commit from before their removal.
    private func checkCurrentMembership(_ commits: [(id: ObjectID, ref: String)], current: CollaborationState?,
                                        pushed: CollaborationState?, verifier: HistoryVerifier) throws -> [PushRejection] {
        let states = [current, pushed].compactMap { $0 }
        guard !states.isEmpty else { return [] }
        // The same few roots sign thousands of commits: each is looked up once.
        var allowedRoots = Set<RootHash>()
        for (id, ref) in commits {
            // Commits verified in this run have their signer; remembered ones were verified before,
            // so their trailer's root is theirs.
            let root: RootHash
            do {
                root = try verifier.verifiedSigner(of: id)?.root ?? CommitPreparation.claimedRoot(of: repository.commit(id))
            } catch let error as CohortError {
                return [PushRejection(commit: id, ref: ref, error: error)]
            }
            if allowedRoots.contains(root) { continue }
            let rotationOnly = verifier.isOnlySelfRotation(id)
            let allowed = states.contains { state in
                guard let participant = state.participant(root) else { return false }
                return rotationOnly || participant.permission == .readWrite
            }
            if allowed, !rotationOnly { allowedRoots.insert(root) }
            if !allowed {
                let newest = states.max { $0.membership.version < $1.membership.version }
                let removed = newest?.directory.status(of: root) == .revoked
                return [PushRejection(commit: id, ref: ref, error: CohortError(
                    removed ? .revoked : .notPermitted,
                    "signed by root \(root.hex), who \(removed ? "was removed" : "is not a participant with write permission") in the collaboration's current membership (version \(newest?.membership.version ?? 0))",
                    hint: "only current participants with write permission can bring new work"))]
            }
        }
        return []
    }

    /// Commits a push's line of new commits is read for before libgit2's walk takes over.
    static let longestLine = 64

    /// Checks every update; returns the refusals (empty: the push may proceed).
    /// `trustingRefs: false` verifies everything the updates reach, as `cohort hook install` does once
    /// for what a repository held before the hook.
    public func verify(_ updates: [RefUpdate], trustingRefs: Bool = true, now: () -> Date = Date.init) throws -> [PushRejection] {
        guard updates.count <= limits.maxUpdates else {
            let first = updates.first
            return [PushRejection(commit: first?.new ?? .zero, ref: first?.name ?? "",
                                  error: CohortError(.tooLarge, "the push updates \(updates.count) refs, more than the \(limits.maxUpdates) allowed",
                                                     hint: PushLimits.tooManyUpdatesHint))]
        }
        let started = now()
        let defaultBranch = (try? repository.headBranch()) ?? CohortLayout.defaultBranch
        let memory = VerifiedCommits(repository: repository)
        // Of the commits the walks list, those verified by an earlier push (asked of the file as they
        // are listed: a push brings a few commits, the file holds the whole history's).
        var remembered = Set<ObjectID>()
        let questions = VerifiedCommits.Questions(memory)
        // Only what the hook accepted counts as verified: branches and tags (in a hooked repository
        // only a push through this hook writes them) and the commits it remembers. Refs a forge writes
        // without running the hook (refs/pull/…, refs/merge-requests/…, refs/keep-around/…) hide
        // nothing: their commits are checked as new.
        let tips = try repository.referenceTips().filter { Self.isPushable($0.key) }
        let heads = Array(Set(tips.values.compactMap { repository.peelToCommit($0) }))
        let trusted = trustingRefs ? heads : []
        // The repository keeps the collaboration (identifier and genesis) it already holds; an empty
        // one takes the first genesis pushed into it.
        let verifier = HistoryVerifier(repository: repository)
        let held = tips[defaultBranch].flatMap { repository.peelToCommit($0) } ?? trusted.first
        let pinned = try repository.configString(Self.genesisKey).map { try ObjectID(hex: $0) }
        if let held {
            verifier.expectedIdentifier = try verifier.state(at: held).collaboration.identifier
            if let pinned, trustingRefs {
                // Every branch the hook accepted descends from the pinned genesis: no walk down the
                // whole first-parent line of the default branch on every push.
                verifier.assume(genesis: pinned, of: held)
            }
            verifier.expectedGenesis = try verifier.genesis(of: held)
        } else {
            // A server registers a collaboration before its first push and pins it in the config.
            verifier.expectedIdentifier = try repository.configString(Self.identifierKey)
            verifier.expectedGenesis = pinned
        }
        let current = try held.map { try verifier.state(at: $0) }
        var verified = Set<ObjectID>()
        var budget = limits.maxCommits
        var rejections: [PushRejection] = []
        var newCommits: [(id: ObjectID, ref: String)] = []
        var pushedTips: [ObjectID] = []
        // Trusting the refs: what the pushed tips reach that no branch or tag does, each once, in the
        // order the walks listed it (a thousand updates of one tip hold one copy of its history).
        // Each with the update that first reached it: a refusal names the ref that brings the commit.
        var reached: [(id: ObjectID, ref: String)] = []
        var listed = Set<ObjectID>()
        var pushedDefault: ObjectID?
        let hidden = Set(trusted)
        var headsRemembered: Bool?
        // What `tip` reaches that no branch or tag does, parents first, and which of them are
        // remembered when that is known already. The usual push, a line of new commits onto a branch
        // or tag, is read down to it, and that line is the answer when none of its commits is
        // remembered and every branch and tag is: the hook remembers every commit it accepts, and
        // each one's history was remembered before it, so a line with no remembered commit holds
        // none that a branch or tag reaches. Anything else is libgit2's walk of the whole graph,
        // which reads as far back as commits share a date (a script's history, made in one second,
        // is read whole on every push). The line is read for at most `longestLine` commits: a tip
        // behind a branch (a tag on an old commit, a branch from the middle of another) would
        // otherwise be read down to the root before the walk, for each of a push's updates.
        func reach(_ tip: ObjectID) throws -> (ids: [ObjectID], remembered: Set<ObjectID>?) {
            // Once a branch or tag is found unremembered, no line is read again in this push.
            if trustingRefs, !hidden.isEmpty, headsRemembered != false,
               let line = repository.lineOfCommits(from: tip, downTo: hidden, limit: min(budget + 1, Self.longestLine)) {
                guard !line.isEmpty else { return ([], []) }
                let answer = questions.remembered(among: headsRemembered == nil ? line + trusted : line)
                if headsRemembered == nil { headsRemembered = trusted.allSatisfy(answer.contains) }
                if headsRemembered == true, !line.contains(where: answer.contains) { return (line, []) }
            }
            return (try repository.commits(from: tip, hiding: trusted), nil)
        }

        for update in updates {
            func reject(_ commit: ObjectID, _ code: CohortError.Code, _ reason: String, hint: String? = nil) {
                rejections.append(PushRejection(commit: commit, ref: update.name, error: CohortError(code, reason, hint: hint)))
            }
            guard Self.isPushable(update.name) else {
                reject(update.new, .notPermitted, "only branches (refs/heads/) and tags (refs/tags/) may be pushed")
                continue
            }
            if update.isDeletion {
                if update.name == defaultBranch {
                    reject(update.old, .notPermitted, "the default branch \(defaultBranch) cannot be deleted")
                }
                continue
            }
            let peeled: ObjectID?
            do { peeled = try repository.peeledCommit(update.new) } catch let error as CohortError {
                reject(update.new, error.code, error.reason, hint: error.hint)
                continue
            }
            guard let tip = peeled else {
                reject(update.new, .malformed, "\(update.name) would point at something that is not a commit")
                continue
            }
            if update.name == defaultBranch, !update.isCreation, !(try repository.isAncestor(update.old, of: tip)) {
                reject(tip, .notPermitted, "non-fast-forward of the default branch \(defaultBranch): history cannot be rewritten",
                       hint: "fetch, merge and push again instead of forcing")
                continue
            }
            // A tip an earlier update of this push already reached, with nothing refused so far: all it
            // reaches was listed, and verified or remembered (a thousand refs at one tip, one walk).
            let (reaching, rememberedOfThem) = trustingRefs && rejections.isEmpty && listed.contains(tip)
                ? ([], []) : try reach(tip)
            let unknown = reaching.filter { !verified.contains($0) && !remembered.contains($0) }
            let rememberedNow = rememberedOfThem ?? questions.remembered(among: unknown)
            remembered.formUnion(rememberedNow)
            let commits = unknown.filter { !rememberedNow.contains($0) }
            guard commits.count <= budget else {
                reject(tip, .tooLarge, "the push brings more than \(limits.maxCommits) new commits", hint: "push in smaller parts")
                continue
            }
            budget -= commits.count
            verifier.prepare(commits)
            var accepted = true
            for id in commits {
                do {
                    try verifier.verify(id)
                    verified.insert(id)
                    newCommits.append((id, update.name))
                } catch let violation as Violation {
                    rejections.append(PushRejection(commit: violation.commit, ref: update.name, error: violation.error))
                    accepted = false
                    break
                }
                if now().timeIntervalSince(started) > limits.maxSeconds {
                    reject(id, .busy, "verifying the push took longer than \(Int(limits.maxSeconds)) s", hint: "push in smaller parts")
                    return rejections
                }
            }
            // At most one preparation runs at a time, whatever the number of updates.
            verifier.finishPreparing()
            if accepted, update.name == defaultBranch { pushedDefault = tip }
            pushedTips.append(tip)
            if trustingRefs {
                for id in reaching where listed.insert(id).inserted { reached.append((id, update.name)) }
            }
        }
        // New to the repository: on no branch or tag before this push (whether or not this verifier
        // remembers them; commits only behind a forge's own refs count as new). Trusting the refs, the
        // walks above hid exactly those branches and tags, so what they listed is that set.
        // Not trusting the refs (one walk from every tip), a commit is named with the first update.
        let firstUpdate = updates.first { !$0.isDeletion }?.name ?? ""
        let freshInOrder = trustingRefs ? reached : try repository.commits(fromAll: pushedTips, hiding: heads).map { (id: $0, ref: firstUpdate) }
        if !trustingRefs { remembered.formUnion(questions.remembered(among: freshInOrder.map(\.id).filter { !remembered.contains($0) })) }
        let fresh = trustingRefs ? listed : Set(freshInOrder.map(\.id))
        // The membership this push gives the default branch counts too, when it is not older.
        let pushed = try pushedDefault.map { try verifier.state(at: $0) }
            .flatMap { $0.membership.version >= (current?.membership.version ?? 0) ? $0 : nil }
        // Every commit new to the branches and tags, remembered or verified now, in history order.
        var seen = Set<ObjectID>()
        let arriving = newCommits.filter { fresh.contains($0.id) && seen.insert($0.id).inserted }
            + freshInOrder.filter { !seen.contains($0.id) && remembered.contains($0.id) }
        if rejections.isEmpty {
            rejections += try checkCurrentMembership(arriving, current: current, pushed: pushed, verifier: verifier)
        }
        if rejections.isEmpty {
            // Remembered before git moves the refs: these commits passed, whatever happens next.
            try? memory.remember(Array(verified))
            if held != nil, pinned == nil, let genesis = verifier.expectedGenesis {
                // The genesis of the history already accepted (never of one only arriving now, which
                // a chained hook may still refuse), pinned so that later pushes need not walk to it.
                try? repository.setConfig(Self.genesisKey, to: genesis.hex)
            }
        }
        return rejections
    }
}
