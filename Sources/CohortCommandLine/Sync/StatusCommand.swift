import ArgumentParser
import CohortGit
import CohortNotices
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
        let opened = try workspace.open()
        let status = try opened.syncStatus(remote: remote)
        let specs = try WorkspaceSinks.specs(opened)
        let sinks = specs.map(\.name)
        let pending = try opened.pendingNotices(for: specs)
        let standings = try opened.sinkStandings(sinks)
        if json {
            let object: [String: Any] = [
                "changes": status.changes.map { ["kind": Self.kind($0.kind), "path": $0.newPath ?? $0.oldPath ?? "", "oldPath": $0.oldPath ?? NSNull()] as [String: Any] },
                "ahead": status.ahead, "behind": status.behind, "tracking": status.tracking,
                "conflictCopies": status.conflictCopies,
                "lastSync": status.lastSync.map { $0.formatted(.iso8601) } ?? NSNull(),
                "lastSummary": status.lastSummary ?? NSNull(),
                "interrupted": status.interrupted, "readOnly": status.readOnly,
                "pendingNotices": pending.values.reduce(0, +), "pendingBySink": pending,
                "sinks": sinks.map { name in
                    ["name": name, "pending": pending[name] ?? 0, "givenUp": standings[name]?.givenUp ?? 0,
                     "stoppedBecause": standings[name]?.stoppedBecause ?? NSNull()] as [String: Any]
                },
                "unwritten": status.unwritten.map { ["path": $0.path, "reason": $0.reason] },
                "running": status.running.map { ["pid": Int($0.pid), "host": $0.host, "since": $0.since.formatted(.iso8601)] as [String: Any] } ?? NSNull(),
                "savedAside": opened.savedAside().map { $0.folder.path },
                "heldBack": status.heldBack.map { ["deleted": $0.deleted, "tracked": $0.tracked] } ?? NSNull(),
                "unpublishedMembership": status.unpublishedMembership.map {
                    ["version": $0.version, "publishedVersion": $0.publishedVersion, "added": $0.added, "removed": $0.removed, "changed": $0.changed] as [String: Any]
                } ?? NSNull(),
            ]
            Terminal.printJSON(object)
            return
        }
        if let running = status.running {
            Terminal.print("a sync is running (pid \(running.pid) on \(running.host), since \(running.since.formatted(.iso8601))); local changes show once it finishes")
        }
        if status.interrupted { Terminal.print("a sync was interrupted: run `cohort sync` to finish it") }
        if let delta = status.unpublishedMembership {
            Terminal.print(status.readOnly
                ? "NOT SHARED: membership version \(delta.version) (\(delta.summary)) is only here, and you take part read-only, so it cannot be pushed"
                : "NOT YET SHARED: membership version \(delta.version) (\(delta.summary)) is only here; the server goes by version \(delta.publishedVersion) until `cohort sync` pushes it")
        }
        if status.running == nil {
            printChanges(status)
        }
        if status.tracking {
            Terminal.print(status.ahead == 0 && status.behind == 0 ? "in step with \(remote) (as last fetched)"
                : "\(status.ahead) commit\(status.ahead == 1 ? "" : "s") to push, \(status.behind) to pull (as last fetched)")
        } else {
            Terminal.print("never synced with \(remote)")
        }
        if let held = status.heldBack {
            Terminal.print("held back: \(held.deleted) of \(held.tracked) tracked files are deleted here; `cohort sync --allow-mass-delete` shares that")
        }
        for path in status.unwritten {
            Terminal.print("not written: \(path.path) (\(path.reason))")
        }
        for copy in status.conflictCopies { Terminal.print("conflict copy: \(copy)") }
        for aside in opened.savedAside().prefix(5) {
            Terminal.print("saved aside: \(aside.folder.path) (\(aside.files) item\(aside.files == 1 ? "" : "s"))")
        }
        if let last = status.lastSync {
            Terminal.print("last sync: \(last.formatted(.iso8601)) (\(status.lastSummary ?? ""))")
        }
        if sinks.isEmpty {
            Terminal.print("notices: no sinks configured (see `cohort sinks list`)")
        } else {
            Terminal.print("notices not yet delivered: " + sinks.map { "\(pending[$0] ?? 0) to \($0)" }.joined(separator: ", "))
            for name in sinks {
                guard let standing = standings[name] else { continue }
                if let reason = standing.stoppedBecause { Terminal.print("sink \(name): its last delivery stopped: \(reason)") }
                if standing.givenUp > 0 {
                    Terminal.print("sink \(name): gave up on \(Terminal.count(standing.givenUp, "notice")) (`\(WorkspaceSinks.replayCommand(name))` tries again)")
                }
            }
        }
    }

    private func printChanges(_ status: SyncStatus) {
        if status.changes.isEmpty {
            Terminal.print("no local changes")
        } else {
            Terminal.print("local changes (\(status.changes.count))\(status.readOnly ? ", kept here: you have read-only access" : ""):")
            for change in status.changes.prefix(50) {
                let path = change.kind == .renamed ? "\(change.oldPath ?? "") → \(change.newPath ?? "")" : (change.newPath ?? change.oldPath ?? "")
                Terminal.print("  \(Self.kind(change.kind).padding(toLength: 8, withPad: " ", startingAt: 0)) \(path)")
            }
            if status.changes.count > 50 { Terminal.print("  … and \(status.changes.count - 50) more") }
        }
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
