import ArgumentParser
import CohortSync
import CohortWorkspace

struct CommitCommand: CohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "commit",
        abstract: "Commit every change, signed, with a notice per change.",
        discussion: "Editor temp and lock files are never staged. Notices: content.created, content.edited, content.renamed (same folder), content.moved (other folder), content.deleted."
    )

    @Option(name: .shortAndLong, help: ArgumentHelp("The commit message.", valueName: "MESSAGE"))
    var message: String

    @OptionGroup var workspace: WorkspaceOptions

    func execute() throws {
        let opened = try workspace.open()
        // One writer at a time: a commit beside a running sync could record half-moved files.
        let lock = try SyncLock.acquire(in: opened.repository.gitDirectory, wait: 60)
        defer { lock.release() }
        guard let summary = try opened.commitChanges(message: message) else {
            Terminal.print("nothing to commit")
            return
        }
        Terminal.print("committed \(summary.commit.hex.prefix(12)): \(Terminal.count(summary.notices.count, "change"))")
        for notice in summary.notices {
            let old = notice.data["oldPath"].map { "\($0) -> " } ?? ""
            Terminal.print("  \(notice.type.rawValue)  \(old)\(notice.data["path"] ?? "")")
        }
    }
}

struct CommentCommand: CohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "comment",
        abstract: "Comment on a file; @handle of a participant mentions them.",
        discussion: "Refused with E_NOT_PERMITTED when comments or mentions are off, or you are read-only."
    )

    @Argument(help: ArgumentHelp("The file, by its path from the top of the workspace.", valueName: "PATH"))
    var path: String

    @Option(help: ArgumentHelp("The comment.", valueName: "TEXT"))
    var text: String

    @OptionGroup var workspace: WorkspaceOptions

    func execute() throws {
        let opened = try workspace.open()
        let lock = try SyncLock.acquire(in: opened.repository.gitDirectory, wait: 60)
        defer { lock.release() }
        let summary = try opened.comment(on: path, text: text)
        let mentions = summary.notices.filter { $0.type == .mention }.compactMap { $0.data["handle"] }
        Terminal.print("commented on \(path) in \(summary.commit.hex.prefix(12))" + (mentions.isEmpty ? "" : ", mentioning " + mentions.joined(separator: ", ")))
    }
}
