import CohortBase
import CohortCollaboration
import CohortGit
import CohortRemote
import CohortIdentity
import CohortVerification
import CohortWorkspace
import Foundation

/// What `cohort clone` made.
public struct CloneOutcome {
    public let workspace: Workspace
    public let identifier: String
    public let title: String
    public let initiator: String
    public let participants: Int
    public let report: VerificationReport
}

extension Workspace {
    /// Clones the collaboration at `link` into `directory` through libgit2, buying a pull token with
    /// this device's key whenever the server asks, then verifies the whole history by the rules. A
    /// history that fails verification is removed again, with everything the clone wrote.
    public static func clone(_ link: CollaborationLink, into directory: URL, home: IdentityHome, client: ServerClient,
                             progress: (@Sendable (TransferProgress) -> Void)? = nil) throws -> CloneOutcome {
        let info = try Blocking.wait { try await client.linkInfo(link) }
        guard info.identifier == link.identifier else {
            throw CohortError(.network, "the server described another collaboration than the link names",
                              hint: "check the link; nothing was cloned")
        }
        _ = try home.loadDevice()
        let exchange = TokenExchange(home: home, client: client)
        do {
            return try clone(from: link.url, into: directory, home: home, expecting: link.identifier, callbacks: RemoteCallbacks(
                credential: { _, attempt in
                    RemoteCredential(username: "cohort", password: try exchange.blockingToken(link, operation: .pull, attempt: attempt).token)
                },
                progress: progress
            ))
        } catch {
            throw exchange.explain(error, link: link, operation: .pull)
        }
    }

    /// A bare repository made with `git init --bare` names `master` as its HEAD while a collaboration
    /// lives on `main`: the clone then has no branch. Take `main` from the remote in that case.
    static func adoptRemoteMain(_ repository: Repository) throws {
        let branch = try repository.headBranch()
        guard try repository.resolve(branch) == nil,
              let main = try repository.resolve("refs/remotes/origin/" + CohortLayout.defaultBranch.dropFirst("refs/heads/".count))
        else { return }
        try repository.updateReference(CohortLayout.defaultBranch, to: main, expected: nil, message: "cohort clone: main")
        try repository.setHead(to: CohortLayout.defaultBranch)
    }

    /// Clones any git remote (a folder, ssh, http) holding a collaboration, then verifies it as above.
    public static func clone(from url: String, into directory: URL, home: IdentityHome, expecting identifier: String? = nil,
                             callbacks: RemoteCallbacks) throws -> CloneOutcome {
        let fileManager = FileManager.default
        var isDirectory: ObjCBool = false
        let existed = fileManager.fileExists(atPath: directory.path, isDirectory: &isDirectory)
        if existed {
            guard isDirectory.boolValue, (try fileManager.contentsOfDirectory(atPath: directory.path)).isEmpty else {
                throw CohortError(.io, "\(directory.path) already exists and is not an empty folder", hint: "clone into a new folder")
            }
        }
        if let path = Repository.localPath(ofRemote: url), !fileManager.fileExists(atPath: path) {
            throw CohortError(.io, "there is no folder \(path) to clone", hint: "give the link the owner sent, or the path of a collaboration's repository")
        }
        func removeClone() {
            if existed {
                for name in (try? fileManager.contentsOfDirectory(atPath: directory.path)) ?? [] {
                    try? fileManager.removeItem(at: directory.appendingPathComponent(name))
                }
            } else {
                try? fileManager.removeItem(at: directory)
            }
        }
        do {
            // Files are written only once the history is verified: a path git refuses, or anything
            // else the rules forbid, never reaches the disk. While Cohort's indexer indexes the pack
            // (`PackTee`), and then while this thread lists the history it fetched, another core checks
            // the signatures of the commits and notices it names, ahead of the verification
            // (`EarlyChecks`); it stops where the verification's own threads start.
            let tee = PackTee()
            let early = tee.map { EarlyChecks(reading: $0) }
            // Waited for on every way out (the verification's start has usually stopped it already):
            // a reader left running could keep a result after the memo is emptied.
            defer { early?.finish() }
            let repository = try Repository.clone(from: url, into: directory, checkout: false, callbacks: callbacks, tee: tee)
            let workspace = try Workspace(repository: repository, home: home)
            try adoptRemoteMain(repository)
            let head = try workspace.head()
            let report = try repository.verifyHistory(to: head.commit) { count in
                early?.finish()
                callbacks.progress?(TransferProgress(.verifying, current: count))
            }
            callbacks.progress?(TransferProgress(.checkingOut))
            try repository.checkoutHeadIntoEmptyFolder()
            // The history was there before this workspace's sinks: they start from what arrives next.
            try workspace.markNoticesTakenIn(upTo: head.commit)
            let state = try workspace.state()
            if let identifier, state.collaboration.identifier != identifier {
                throw CohortError(.notPermitted, "the remote holds collaboration \(state.collaboration.identifier), not \(identifier)",
                                  hint: "the clone was removed; check the link")
            }
            return CloneOutcome(workspace: workspace, identifier: state.collaboration.identifier, title: state.collaboration.title, initiator: state.collaboration.initiator.name,
                                participants: state.membership.participants.count, report: report)
        } catch let violation as Violation {
            removeClone()
            let error = violation.cohortError
            throw CohortError(error.code, "the history failed verification, so the clone was removed: \(error.reason)",
                              hint: "tell the collaboration's owner; never use an unverified history")
        } catch {
            removeClone()
            throw error
        }
    }
}
