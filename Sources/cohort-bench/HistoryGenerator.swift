import CohortCollaboration
import CohortGit
import CohortIdentity
import CohortVerification
import CohortWorkspace
import Foundation

/// Generates a collaboration with `commits` signed commits after its genesis, each editing one of 100
/// files and carrying its `content.edited` notice, as `cohort commit` makes them; used to measure
/// `cohort verify` against `git log` on the same history.
func generateHistory(at directory: URL, home: IdentityHome, commits: Int) throws {
    if !home.hasDevice {
        _ = try home.initialise(handle: "bench@example.com", name: "Bench", deviceName: "bench")
    }
    let (workspace, collaboration) = try Workspace.start(StartRequest(directory: directory, title: "Benchmark"), home: home)
    let repository = workspace.repository
    let signer = try CollaborationSigner(home: home, context: collaboration.context())
    let author = Person(name: "Bench", email: "bench@example.com")
    let branch = try workspace.head().branch
    var head = try workspace.head().commit
    let start = head
    var tree = try repository.tree(ofCommit: head)
    let clock = ContinuousClock()
    let began = clock.now
    for index in 0..<commits {
        let path = "docs/file-\(index % 100).md"
        let notice = Notice(type: .contentEdited, collaboration: collaboration.identifier, actor: signer.root,
                            data: ["path": path], signer: signer.signer)
        tree = try repository.tree(from: tree, putting: [
            path: repository.writeBlob(Data("revision \(index)\n".utf8)),
            notice.path: repository.writeBlob(Envelope.seal(notice, by: signer).fileData()),
        ])
        head = try repository.createCommit(
            tree: tree, parents: [head], message: CommitTrailer.append(to: "Edit \(path)", scheme: signer.root.scheme, proof: signer.proof),
            author: author, sign: { try SSHSignature.sign($0, with: signer.key) })
        if index % 1000 == 999 {
            FileHandle.standardError.write(Data("generated \(index + 1) commits\n".utf8))
        }
    }
    try repository.updateReference(branch, to: head, expected: start, message: "benchmark history")
    try repository.resetIndex(to: tree)
    let elapsed = began.duration(to: clock.now)
    FileHandle.standardError.write(Data("generated \(commits) signed commits in \(elapsed)\n".utf8))
}
