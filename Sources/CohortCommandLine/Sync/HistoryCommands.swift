import ArgumentParser
import CohortBase
import CohortGit
import CohortSync
import CohortWorkspace
import Foundation

struct HistoryCommand: CohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Who changed a file and when, newest first, from the verified history.",
        discussion: "Renames and moves are followed back to where the file began; conflict copies made of it and comments on it are listed too. Each line gives the commit to pass to `cohort restore PATH --at COMMIT`."
    )

    @Argument(help: ArgumentHelp("The file, by its path from the top of the workspace.", valueName: "PATH"))
    var path: String

    @Option(help: ArgumentHelp("List at most this many changes.", valueName: "N"))
    var limit = 1000

    @Flag(help: "Print the changes as JSON.")
    var json = false

    @OptionGroup var workspace: WorkspaceOptions

    func validate() throws {
        guard (1...100_000).contains(limit) else { throw ValidationError("--limit must be 1 to 100000") }
    }

    func execute() throws {
        let events = try workspace.open().history(of: path, limit: limit)
        if json {
            let list = events.map { event -> [String: Any] in
                var item: [String: Any] = ["commit": event.commit.hex, "type": event.notice.type.rawValue, "time": event.notice.time.formatted(.iso8601),
                                           "by": event.notice.actor, "handle": event.handle ?? NSNull()]
                for (key, value) in event.notice.data { item[key] = value }
                return item
            }
            var data = (try? JSONSerialization.data(withJSONObject: list, options: [.sortedKeys])) ?? Data("[]".utf8)
            data.append(0x0A)
            Terminal.write(data)
            return
        }
        guard !events.isEmpty else {
            throw CohortError(.notFound, "\(path) has no history in this collaboration", hint: "paths are from the top of the workspace; see `cohort status`")
        }
        for event in events {
            let who = event.handle ?? String(event.notice.actor.prefix(12))
            var what = "\(event.notice.type.rawValue) \(event.notice.data["path"] ?? "")"
            if let old = event.notice.data["oldPath"] { what += " (from \(old))" }
            if let original = event.notice.data["conflictOf"] { what += " (conflict copy of \(original))" }
            Terminal.print("\(event.commit.hex.prefix(12))  \(event.notice.time.formatted(.iso8601))  \(who)  \(what)")
        }
    }
}

struct RestoreCommand: CohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Bring back a file as it was at an earlier commit, as a new signed edit.",
        discussion: "The current version stays in history; an uncommitted local version is saved aside first (see `cohort status`). The restore is committed here; `cohort sync` shares it."
    )

    @Argument(help: ArgumentHelp("The file, by its path from the top of the workspace.", valueName: "PATH"))
    var path: String

    @Option(help: ArgumentHelp("The commit whose version to bring back (from `cohort history PATH`).", valueName: "COMMIT"))
    var at: String

    @OptionGroup var workspace: WorkspaceOptions

    func execute() throws {
        let outcome = try workspace.open().restore(path, at: at)
        guard let summary = outcome.summary else {
            Terminal.print("\(path) is already as it was at \(outcome.from.hex.prefix(12)); nothing to restore")
            return
        }
        Terminal.print("restored \(path) as it was at \(outcome.from.hex.prefix(12)); committed \(summary.commit.hex.prefix(12)) (\(summary.notices.map(\.type.rawValue).joined(separator: ", ")))")
        if let aside = outcome.savedAside { Terminal.print("your uncommitted version is saved at \(aside)") }
        Terminal.print("`cohort sync` shares it")
    }
}

struct DiscardCommand: CohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "discard",
        abstract: "Throw away local changes (all, or at the paths given), saving each version aside first.",
        discussion: "Each discarded version is copied to .git/cohort/aside/<UTC time>/ before the file goes back to the collaboration's version (a new file is removed); `cohort status` lists those folders. Nothing is committed."
    )

    @Argument(help: ArgumentHelp("Files or folders to discard changes in (default: every local change).", valueName: "PATH"))
    var paths: [String] = []

    @OptionGroup var workspace: WorkspaceOptions

    func execute() throws {
        let outcome = try workspace.open().discard(paths.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 })
        guard let folder = outcome.savedIn else {
            Terminal.print(paths.isEmpty ? "no local changes" : "no local changes at \(paths.joined(separator: ", "))")
            return
        }
        let count = outcome.changes.count
        Terminal.print("discarded \(count) local change\(count == 1 ? "" : "s"); your versions are saved in \(folder.path)")
        for change in outcome.changes.prefix(50) {
            Terminal.print("  \(StatusCommand.kind(change.kind).padding(toLength: 8, withPad: " ", startingAt: 0)) \(change.newPath ?? change.oldPath ?? "")")
        }
    }
}
