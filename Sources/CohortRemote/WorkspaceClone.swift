import CohortCollaboration
import CohortGit
import CohortIdentity
import CohortVerification
import CohortWorkspace
import Foundation

/// What `cohort clone` made.
public struct CloneOutcome {
    public let workspace: Workspace
    public let info: ServerAPI.LinkInfo
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
            throw CohortError(.network, "the server described another collaboration than the link names")
        }
        let fileManager = FileManager.default
        var isDirectory: ObjCBool = false
        let existed = fileManager.fileExists(atPath: directory.path, isDirectory: &isDirectory)
        if existed {
            guard isDirectory.boolValue, (try fileManager.contentsOfDirectory(atPath: directory.path)).isEmpty else {
                throw CohortError(.io, "\(directory.path) already exists and is not an empty folder", hint: "clone into a new folder")
            }
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
        let exchange = TokenExchange(home: home, client: client)
        _ = try home.loadDevice()
        do {
            let repository = try Repository.clone(from: link.url, into: directory, callbacks: RemoteCallbacks(
                credential: { _, attempt in
                    RemoteCredential(username: "cohort", password: try exchange.blockingToken(link, operation: .pull, attempt: attempt).token)
                },
                progress: progress
            ))
            let workspace = try Workspace(repository: repository, home: home)
            let head = try workspace.head()
            let report = try repository.verifyHistory(to: head.commit)
            let identifier = try workspace.state().collaboration.identifier
            guard identifier == link.identifier else {
                throw CohortError(.notPermitted, "the server sent collaboration \(identifier), not \(link.identifier)")
            }
            return CloneOutcome(workspace: workspace, info: info, report: report)
        } catch let violation as Violation {
            removeClone()
            let error = violation.asError
            throw CohortError(error.code, "the history failed verification, so the clone was removed: \(error.reason)",
                              hint: "tell the collaboration's owner; never use an unverified history")
        } catch {
            removeClone()
            throw exchange.explain(error, link: link, operation: .pull)
        }
    }
}
