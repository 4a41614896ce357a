import ArgumentParser
import CohortGit
import CohortIdentity
import CohortSync
import CohortWorkspace
import Foundation

struct StatusCommand: CohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Local changes, ahead/behind the remote, conflict copies, the last sync, pending notices.",
        discussion: "Ahead and behind compare with the remote as last fetched (by `cohort sync`); nothing is fetched."
    )

    @Option(help: ArgumentHelp("The remote to compare with.", valueName: "NAME"))
    var remote = "origin"

    @Flag(help: "Print the status as JSON.")
    var json = false

    @OptionGroup var workspace: WorkspaceOptions

    func execute() throws {
        let status = try workspace.open().syncStatus(remote: remote)
        if json {
            let object: [String: Any] = [
                "changes": status.changes.map { ["kind": Self.kind($0.kind), "path": $0.newPath ?? $0.oldPath ?? "", "oldPath": $0.oldPath ?? NSNull()] as [String: Any] },
                "ahead": status.ahead, "behind": status.behind, "tracking": status.tracking,
                "conflictCopies": status.conflictCopies,
                "lastSync": status.lastSync.map { $0.formatted(.iso8601) } ?? NSNull(),
                "lastSummary": status.lastSummary ?? NSNull(),
                "interrupted": status.interrupted, "pendingNotices": status.pendingNotices, "readOnly": status.readOnly,
            ]
            var data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
            data.append(0x0A)
            Terminal.write(data)
            return
        }
        if status.interrupted { Terminal.print("a sync was interrupted: run `cohort sync` to finish it") }
        if status.changes.isEmpty {
            Terminal.print("no local changes")
        } else {
            Terminal.print("local changes (\(status.changes.count))\(status.readOnly ? ", kept here: you read only" : ""):")
            for change in status.changes.prefix(50) {
                let path = change.kind == .renamed ? "\(change.oldPath ?? "") → \(change.newPath ?? "")" : (change.newPath ?? change.oldPath ?? "")
                Terminal.print("  \(Self.kind(change.kind).padding(toLength: 8, withPad: " ", startingAt: 0)) \(path)")
            }
            if status.changes.count > 50 { Terminal.print("  … and \(status.changes.count - 50) more") }
        }
        if status.tracking {
            Terminal.print(status.ahead == 0 && status.behind == 0 ? "in step with \(remote) (as last fetched)"
                : "\(status.ahead) commit\(status.ahead == 1 ? "" : "s") to push, \(status.behind) to pull (as last fetched)")
        } else {
            Terminal.print("never synced with \(remote)")
        }
        for copy in status.conflictCopies { Terminal.print("conflict copy: \(copy)") }
        if let last = status.lastSync {
            Terminal.print("last sync: \(last.formatted(.iso8601)) (\(status.lastSummary ?? ""))")
        }
        Terminal.print("notices not yet delivered: \(status.pendingNotices)")
    }

    static func kind(_ kind: Change.Kind) -> String {
        switch kind {
        case .added: "created"
        case .modified: "edited"
        case .deleted: "deleted"
        case .renamed: "renamed"
        }
    }
}
