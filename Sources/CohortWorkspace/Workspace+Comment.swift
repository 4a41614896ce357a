import CohortBase
import CohortCollaboration
import CohortGit
import CohortVerification
import Foundation

extension Workspace {
    /// Largest comment, in bytes.
    public static let maxCommentBytes = 4096

    /// Comments on `path`: a `content.commented` notice, and a `mention` notice for every `@handle`
    /// of a participant in the text. Refused with `E_NOT_PERMITTED` where the collaboration's options
    /// or the participant's switches forbid comments or mentions, or the participant is read-only.
    public func comment(on path: String, text: String, now: Date = Date()) throws -> CommitSummary {
        let (state, signer, me) = try writer()
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.utf8.count <= Self.maxCommentBytes else {
            throw CohortError(.malformed, "a comment is 1 to \(Self.maxCommentBytes) bytes of text")
        }
        let head = try head()
        let headTree = try repository.tree(ofCommit: head.commit)
        guard !CohortLayout.isCohortPath(path), try repository.entry(at: path, inTree: headTree) != nil else {
            throw CohortError(.malformed, "\(path) is not in the collaboration", hint: "comment on a committed file, by its path from the top of the workspace")
        }
        let options = state.collaboration.shareOptions
        guard options.commentsAllowed, me.comments else {
            throw CohortError(.notPermitted, "comments are off for \(me.label) in this collaboration")
        }
        let mentioned = Self.mentions(in: trimmed, among: state.membership.participants)
        if !mentioned.isEmpty, !(options.mentionsAllowed && me.mentions) {
            throw CohortError(.notPermitted, "mentions are off for \(me.label) in this collaboration",
                              hint: "write the comment without @handles")
        }
        let identifier = state.collaboration.identifier
        var notices = [Notice(type: .contentCommented, collaboration: identifier, actor: signer.root,
                              data: ["path": path, "text": trimmed], time: now, signer: signer.signer)]
        for participant in mentioned {
            notices.append(Notice(type: .mention, collaboration: identifier, actor: signer.root,
                                  data: ["path": path, "mentioned": participant.root, "handle": participant.handle ?? "", "text": trimmed],
                                  time: now, signer: signer.signer))
        }
        let sealed = try seal(notices, by: signer)
        let tree = try repository.tree(from: headTree, putting: sealed.blobs)
        let id = try commit(tree: tree, on: head, message: "Comment on \(path)", signer: signer, write: sealed.files)
        return CommitSummary(commit: id, notices: notices)
    }

    /// The participants whose `@handle` appears in `text` (trailing punctuation ignored), each once.
    static func mentions(in text: String, among participants: [Participant]) -> [Participant] {
        var found: [Participant] = []
        for word in text.split(whereSeparator: { $0.isWhitespace }) where word.hasPrefix("@") {
            let handle = String(word.dropFirst()).trimmingCharacters(in: CharacterSet(charactersIn: ".,;:!?)]}\"'"))
            if let participant = participants.first(where: { $0.handle == handle }), !found.contains(participant) {
                found.append(participant)
            }
        }
        return found
    }
}
