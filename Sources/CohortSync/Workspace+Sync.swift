import CohortBase
import CohortCollaboration
import CohortGit
import CohortRemote
import CohortVerification
import CohortWorkspace
import Foundation

extension Workspace {
    /// `cohort sync`: under the workspace's lock, finish an interrupted sync; commit local changes
    /// (signed, with notices); fetch; verify what arrived (an unverifiable history is refused and
    /// the workspace left as it was); merge in memory, conflicts becoming conflict copies; move the
    /// branch and the files without overwriting anything the person wrote; push; and when someone
    /// pushed first, fetch and merge again, a bounded number of times.
    ///
    /// Blocks (libgit2 and the token exchange): call it from a thread of its own.
    public func sync(_ options: SyncOptions, client: ServerClient, now: @escaping () -> Date = Date.init) throws -> SyncReport {
        let lock = try SyncLock.acquire(in: repository.gitDirectory, wait: options.wait)
        defer { lock.release() }
        var report = SyncReport()
        var step = SyncReport.Step.prepare
        do {
            try run(options, client: client, now: now, report: &report, step: &step, crashed: lock.previousHolderCrashed)
        } catch {
            // What already happened stays in the report; the failure names its step.
            let failure = CohortError(error, otherwise: .git)
            report.failure = SyncReport.Failure(step: step, error: failure)
        }
        var journal = SyncJournal.load(from: repository.gitDirectory)
        journal.lastSync = now()
        journal.lastSummary = report.summaryLine
        try? journal.save(to: repository.gitDirectory)
        if report.failure == nil { repository.packWhenNeeded() }
        return report
    }

    private func run(_ options: SyncOptions, client: ServerClient, now: @escaping () -> Date, report: inout SyncReport,
                     step: inout SyncReport.Step, crashed: Bool) throws {
        try GitLocks.clearStale(in: repository.gitDirectory)
        if crashed { cleanUpAfterCrash() }
        var journal = SyncJournal.load(from: repository.gitDirectory)
        let state = try state()
        let signer = try signer(for: state)
        let me = try me(in: state, signer: signer)
        let label = me.handle ?? String(signer.root.hex.prefix(12))
        report.readOnly = me.permission == .readOnly
        let aside = report.readOnly ? label : nil
        if let move = journal.move {
            step = .checkout
            try finish(move, journal: &journal, report: &report, aside: aside, now: now())
            report.resumed = true
        }
        if FileManager.default.fileExists(atPath: UnwrittenPaths.url(in: repository.gitDirectory).path) {
            // Paths an earlier sync could not write: tried again before anything is committed.
            step = .checkout
            let tree = try repository.tree(ofCommit: head().commit)
            report.add(try checkout(from: tree, to: tree, copyLabel: "incoming", asideLabel: aside, now: now()))
        }
        guard let configured = try repository.remoteURL(options.remote) else {
            throw CohortError(.git, "this workspace has no remote '\(options.remote)'",
                              hint: "publish it (`cohort publish URL`), clone it from a link, or `git remote add \(options.remote) URL`")
        }
        let url = repository.absoluteRemoteURL(configured)
        let access = RemoteAccess(url: url, home: home, client: client)
        report.handles = state.membership.everyHandle
        try markHistoryBeforeChanges()

        step = .commit
        // The files staged and committed with their notices: one pack of new objects, one index write.
        if options.commitLocalChanges {
            try repository.batchingObjects {
                let pending = try pendingChanges(writingIndex: report.readOnly)
                if report.readOnly {
                    report.localChangesKept = pending.changes.count
                } else {
                    try checkMassDeletion(pending, options)
                    report.committed = try commitChanges(message: options.message ?? "Sync", now: now(), pending: pending)
                }
            }
        }
        if !report.readOnly { FaultPoint.reach(.afterCommit) }

        var refusal: PushResult?
        var lastRemote: ObjectID?
        var stillRounds = 0
        for round in 1...max(1, options.maxAttempts) {
            report.rounds = round
            step = .fetch
            let theirs = try fetchVerified(options.remote, access: access, progress: options.progress)
            FaultPoint.reach(.afterFetch)
            if let refusal, theirs == lastRemote {
                // The remote did not move: a refusal that is not a lost race is the answer, and a
                // "lost race" three times over with the remote still (a lock left on the server) too.
                stillRounds += 1
                if !refusal.lostRace || stillRounds >= 3 {
                    try refusal.check()
                }
            } else {
                stillRounds = 0
            }
            lastRemote = theirs
            var head = try self.head()
            if let theirs, theirs != head.commit, !(try repository.isAncestor(theirs, of: head.commit)) {
                // Sharing committed work only (participants … --push): edits not committed here would
                // not take part in a merge, and a later sync would then undo what arrived. Leave both.
                if !options.commitLocalChanges, !(try pendingChanges(writingIndex: false).changes.isEmpty) {
                    step = .merge
                    throw CohortError(.git, "the remote has new commits and this folder has edits not committed yet, so nothing was merged or pushed",
                                      hint: "run `cohort sync`: it commits your edits, merges both sides and pushes what you committed")
                }
                let arrived = try repository.commits(from: theirs, hiding: [head.commit])
                report.received += arrived
                report.receivedNotices += try repository.noticesAdded(by: arrived, presentIn: repository.tree(ofCommit: head.commit))
                if try repository.isAncestor(head.commit, of: theirs) {
                    step = .checkout
                    try move(head, to: theirs, journal: &journal, report: &report, aside: aside, now: now())
                } else {
                    guard !report.readOnly else {
                        throw CohortError(.notPermitted, "this read-only workspace has commits the collaboration does not",
                                          hint: "they cannot be pushed; keep a copy of your files and clone the collaboration again")
                    }
                    step = .merge
                    let merge = try mergeCommit(head, theirs, signer: signer, label: label, remote: options.remote, report: &report, now: now())
                    FaultPoint.reach(.afterMergeCommit)
                    report.merge = merge
                    step = .checkout
                    try move(head, to: merge, journal: &journal, report: &report, aside: aside, now: now())
                }
                head = try self.head()
            }
            if report.readOnly || head.commit == theirs { break }
            step = .push
            let refspecs = ["\(head.branch):\(CohortLayout.defaultBranch)"]
            // Into a folder, libgit2 would write the objects itself and skip the receiving side's
            // hooks: stock git runs its receive-pack, and with it Cohort's verifying hook.
            let result = Repository.isLocalRemote(url)
                ? try access.transfer(.push) { try repository.pushWithGit(remote: options.remote, refspecs: refspecs, progress: options.progress) }
                : try access.transfer(.push) {
                    try repository.push(remote: options.remote, refspecs: refspecs, callbacks: access.callbacks(for: .push, progress: options.progress))
                }
            FaultPoint.reach(.afterPush)
            if result.accepted {
                report.pushed = true
                break
            }
            refusal = result
            if round == options.maxAttempts {
                if !result.lostRace { try result.check() }
                throw CohortError(.busy, "others kept pushing to \(options.remote) first: \(round) attempts lost the race",
                                  hint: "nothing is lost: your commits are here, and the next sync pushes them")
            }
            // Someone pushed first: wait a little (more each round, jittered, so that racing
            // editors spread out), then fetch, merge and push again.
            Thread.sleep(forTimeInterval: options.backoff(round))
        }
    }
    /// Fetches `remote`'s default branch and verifies its history by the rules; a history that fails is
    /// refused and the remote-tracking ref put back where it was. Returns the verified tip (nil: the
    /// remote is empty).
    func fetchVerified(_ remote: String, access: RemoteAccess, progress: (@Sendable (TransferProgress) -> Void)?) throws -> ObjectID? {
        let tracking = "refs/remotes/\(remote)/main"
        let before = try repository.resolve(tracking)
        try access.transfer(.pull) { try repository.fetch(remote: remote, callbacks: access.callbacks(for: .pull, progress: progress)) }
        guard let tip = try repository.resolve(tracking) else { return nil }
        do {
            _ = try repository.verifyHistory(to: tip)
            let identifier = try HistoryVerifier(repository: repository).state(at: tip).collaboration.identifier
            guard identifier == (try state().collaboration.identifier) else {
                throw CohortError(.notPermitted, "the remote holds collaboration \(identifier), not this one",
                                  hint: "point the remote at this collaboration's repository (`git remote -v`)")
            }
        } catch {
            if let before {
                try? repository.updateReference(tracking, to: before, expected: tip, message: "cohort sync: refused unverified history")
            } else {
                try? repository.deleteReference(tracking)
            }
            let reason = CohortError(error, otherwise: .git)
            throw CohortError(reason.code, "the remote's history failed verification, so nothing was merged: \(reason.reason)",
                              hint: "your workspace is unchanged; tell the collaboration's owner")
        }
        return tip
    }

    /// Moves the branch from `head` to `target` and the files with it, journalled so that an
    /// interruption is finished by the next sync.
    private func move(_ head: (branch: String, commit: ObjectID), to target: ObjectID,
                      journal: inout SyncJournal, report: inout SyncReport, aside: String?, now: Date) throws {
        journal.move = SyncJournal.Move(branch: head.branch, from: head.commit.hex, to: target.hex)
        try journal.save(to: repository.gitDirectory)
        FaultPoint.reach(.afterJournal)
        try finish(journal.move!, journal: &journal, report: &report, aside: aside, now: now)
    }

    /// The journalled move: the branch (if it is still where it was), then the files, then the journal.
    private func finish(_ move: SyncJournal.Move, journal: inout SyncJournal, report: inout SyncReport, aside: String?, now: Date) throws {
        let from = try ObjectID(hex: move.from)
        let to = try ObjectID(hex: move.to)
        let current = try repository.resolve(move.branch)
        if current == from {
            try repository.updateReference(move.branch, to: to, expected: from, message: "cohort sync")
            FaultPoint.reach(.afterBranchMove)
        }
        if current == from || current == to {
            report.add(try checkout(from: repository.tree(ofCommit: from), to: repository.tree(ofCommit: to), copyLabel: "incoming",
                                    asideLabel: aside, now: now))
            FaultPoint.reach(.afterCheckout)
        }
        journal.move = nil
        try journal.save(to: repository.gitDirectory)
    }

    /// The merge of `theirs` into `head`: a three-way merge of the trees with renames detected; the
    /// newest membership of the two; every notice of both; a conflict copy (and a `content.edited`
    /// notice naming it) where both changed a file in overlapping ways. Signed and verified; no
    /// branch moves.
    private func mergeCommit(_ head: (branch: String, commit: ObjectID), _ theirs: ObjectID, signer: CollaborationSigner, label: String,
                             remote: String, report: inout SyncReport, now: Date) throws -> ObjectID {
        let verifier = HistoryVerifier(repository: repository)
        let ours = try verifier.state(at: head.commit)
        let incoming = try verifier.state(at: theirs)
        // Each of the two files comes from the side where it is newest (the verifier refuses a merge
        // that keeps an older one, whichever side it is on).
        let newestMembers = try repository.tree(ofCommit: incoming.membership.version > ours.membership.version ? theirs : head.commit)
        let newestSettings = try repository.tree(
            ofCommit: incoming.collaboration.revisionNumber > ours.collaboration.revisionNumber ? theirs : head.commit)
        var replacing: [String: IndexEntry?] = [:]
        for (path, tree) in [(CohortLayout.collaboration, newestSettings), (CohortLayout.members, newestMembers)] {
            if let entry = try repository.entry(at: path, inTree: tree) {
                replacing[path] = IndexEntry(path: path, id: entry.id, mode: entry.mode)
            }
        }
        let ourTree = try repository.tree(ofCommit: head.commit)
        let theirTree = try repository.tree(ofCommit: theirs)
        let base = try repository.mergeBase(head.commit, theirs).map { try repository.tree(ofCommit: $0) }
        var made: Set<String> = []
        var copies: [(copy: String, of: String)] = []
        let taken: (String) -> Bool = { [repository] path in
            made.contains(path) || (try? repository.entry(at: path, inTree: ourTree)) != nil
                || (try? repository.entry(at: path, inTree: theirTree)) != nil
        }
        let merged = try repository.mergeTrees(ancestor: base, ours: ourTree, theirs: theirTree, resolve: { conflict in
            let path = conflict.ours?.path ?? conflict.theirs?.path ?? conflict.ancestor?.path ?? ""
            if path == CohortLayout.collaboration || path == CohortLayout.members { return [] }
            let resolution = ConflictCopy.resolve(conflict, label: label, time: now, taken: taken)
            if let copy = resolution.copy {
                made.insert(copy.path)
                copies.append((copy.path, copy.of))
            }
            return resolution.entries
        }, replacing: replacing, settle: { clash in
            // A file against a folder: as for any conflict, the remote's side keeps the path and this
            // device's moves beside it, a file to `notes (conflict, …)`, a folder to `notes (conflict, …)/…`.
            let theirsIsFile = (try? repository.entry(at: clash.file.path, inTree: theirTree))??.isTree == false
            let moved = ConflictCopy.settle(clash, theirsIsFile: theirsIsFile, label: label, time: now, taken: taken)
            for copy in moved.copies {
                made.insert(copy.path)
                copies.append((copy.path, copy.of))
            }
            return moved.entries
        })
        let notices = copies.map { copy in
            Notice(type: .contentEdited, collaboration: ours.collaboration.identifier, actor: signer.root,
                   data: ["path": copy.copy, "conflictOf": copy.of], time: now, signer: signer.signer)
        }
        let tree = notices.isEmpty ? merged : try repository.tree(from: merged, putting: seal(notices, by: signer).blobs)
        report.conflicts += copies
        let arrived = try repository.commits(from: theirs, hiding: [head.commit]).count
        let card = try home.requireCard()
        var message = "Merge \(arrived) commit\(arrived == 1 ? "" : "s") from \(remote)"
        if !copies.isEmpty {
            message += "\n\nConflict copies:\n" + copies.map { "  \($0.copy) (of \($0.of))" }.joined(separator: "\n")
        }
        return try repository.createVerifiedCommit(tree: tree, parents: [head.commit, theirs], message: message, signer: signer,
                                                   author: Person(name: card.name, email: card.handle))
    }

    /// Refuses (`E_NOT_PERMITTED`) to commit the deletion of more than `massDeleteShare` of the
    /// tracked files (3 at least) unless allowed: an emptied folder is more often an accident.
    private func checkMassDeletion(_ pending: PendingChanges, _ options: SyncOptions) throws {
        guard !options.allowMassDelete, let held = try massDeletion(pending, share: options.massDeleteShare) else { return }
        throw CohortError(.notPermitted, "held back: \(held.deleted) of \(held.tracked) tracked files were deleted (more than \(Int(options.massDeleteShare * 100))%)",
                          hint: "nothing was committed; if you meant it, run `cohort sync --allow-mass-delete`")
    }

    /// The deletions among `pending` when they are more than `share` of the tracked files (3 at least).
    func massDeletion(_ pending: PendingChanges, share: Double) throws -> (deleted: Int, tracked: Int)? {
        let deleted = pending.changes.filter { $0.kind == .deleted }.count
        guard deleted >= 3 else { return nil }
        let tracked = try repository.treeChanges(from: nil, to: repository.tree(ofCommit: pending.head.commit))
            .filter { !CohortLayout.isCohortPath($0.newPath ?? "") }.count
        guard Double(deleted) > share * Double(max(tracked, 1)) else { return nil }
        return (deleted, tracked)
    }
}
