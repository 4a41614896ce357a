import ArgumentParser
import CohortIdentity
import CohortNotices
import CohortRemote
import CohortSinks
import CohortSync
import CohortVerification
import CohortWorkspace
import Foundation

struct SyncCommand: AsyncCohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Commit local changes, fetch, verify, merge (conflicts become copies), push, deliver notices.",
        discussion: """
        One sync at a time per workspace (a second one waits, see --wait). An interrupted sync (a crash,
        a kill) is finished by the next one. More than --mass-delete-share of the tracked files deleted
        is held back unless --allow-mass-delete. A read-only participant's sync only pulls; local edits
        stay in the folder. See Docs/Sync.md.
        """
    )

    @Option(name: .shortAndLong, help: ArgumentHelp("The message of the commit of local changes.", valueName: "MESSAGE"))
    var message: String?

    @Option(help: ArgumentHelp("The remote to sync with.", valueName: "NAME"))
    var remote = "origin"

    @Flag(name: .customLong("allow-mass-delete"), help: "Commit deletions even of more than the share below.")
    var allowMassDelete = false

    @Option(name: .customLong("mass-delete-share"), help: ArgumentHelp("Hold back deleting more than this share of tracked files (0 to 1).", valueName: "SHARE"))
    var massDeleteShare = 0.5

    @Option(help: ArgumentHelp("Seconds to wait for another sync of this workspace.", valueName: "S"))
    var wait = 60.0

    @Flag(help: "Print the report as JSON.")
    var json = false

    @OptionGroup var workspace: WorkspaceOptions

    func validate() throws {
        guard (0...1).contains(massDeleteShare) else { throw ValidationError("--mass-delete-share must be between 0 and 1") }
        guard wait >= 0, wait <= 86_400 else { throw ValidationError("--wait must be 0 to 86400 seconds") }
    }

    func execute() async throws {
        var options = SyncOptions()
        options.message = message
        options.remote = remote
        options.allowMassDelete = allowMassDelete
        options.massDeleteShare = massDeleteShare
        options.wait = wait
        options.progress = json ? nil : TerminalProgress.make(label: "Transferring")
        let opened = try workspace.open()
        let report = try await SyncRun.run(opened, options: options)
        TerminalProgress.finish()
        let delivered = try await WorkspaceSinks.deliver(opened)
        if json {
            Terminal.write(SyncRun.json(report, delivered: delivered))
        } else {
            for line in SyncRun.lines(report, delivered: delivered) { Terminal.print(line) }
        }
    }
}

/// What `cohort sync` and `cohort watch` share: running a sync off Swift's cooperative threads (it
/// blocks in libgit2) and describing the result.
enum SyncRun {
    /// Holds a workspace for the sync's own thread (the workspace is used by that thread alone).
    private final class Box: @unchecked Sendable {
        let workspace: Workspace
        init(_ workspace: Workspace) { self.workspace = workspace }
    }

    static func run(_ workspace: Workspace, options: SyncOptions) async throws -> SyncReport {
        let box = Box(workspace)
        let client = ServerClient()
        defer { Task { await client.shutdown() } }
        return try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result {
                    do {
                        return try box.workspace.sync(options, client: client)
                    } catch let violation as Violation {
                        throw violation.asError
                    }
                })
            }.start()
        }
    }

    static func lines(_ report: SyncReport, delivered: [NoticeOutbox.Report]?) -> [String] {
        var lines: [String] = []
        if report.resumed { lines.append("finished an interrupted sync first") }
        if let committed = report.committed {
            lines.append("committed \(committed.commit.hex.prefix(12)): " + describe(committed.notices.map { "\($0.type.rawValue) \($0.data["path"] ?? "")" }))
        }
        if report.readOnly {
            lines.append("read only: pulled only" + (report.localChangesKept > 0 ? "; \(report.localChangesKept) local change\(report.localChangesKept == 1 ? " is" : "s are") kept in this folder, not shared" : ""))
        }
        if !report.received.isEmpty {
            let mine = report.merge.map { [$0] } ?? []
            let count = report.received.filter { !mine.contains($0) }.count
            lines.append("received \(count) commit\(count == 1 ? "" : "s"): " + describe(report.receivedNotices.filter { $0.type != .mention }.map { "\($0.type.rawValue) \($0.data["path"] ?? $0.data["handle"] ?? "")" }))
        }
        for conflict in report.conflicts {
            lines.append("conflict: \(conflict.of) was changed on both sides; the collaboration's version stays, yours is \"\(conflict.copy)\"")
        }
        for (path, copy) in zip(report.keptLocal, report.incomingCopies) {
            lines.append("kept your edit of \(path); the incoming version is \"\(copy)\"")
        }
        for (path, reason) in report.skipped {
            lines.append("not written to this folder: \(path) (\(reason))")
        }
        if report.pushed { lines.append("pushed") }
        if let delivered {
            for sink in delivered where sink.delivered > 0 || sink.stoppedBecause != nil {
                lines.append("notices: \(sink.delivered) delivered to \(sink.sink)" + (sink.stoppedBecause.map { ", \(sink.pending) waiting: \($0)" } ?? ""))
            }
        }
        if lines.isEmpty || (lines.count == 1 && report.resumed) { lines.append("up to date") }
        return lines
    }

    private static func describe(_ items: [String]) -> String {
        items.isEmpty ? "no notices" : items.prefix(8).joined(separator: ", ") + (items.count > 8 ? ", and \(items.count - 8) more" : "")
    }

    static func json(_ report: SyncReport, delivered: [NoticeOutbox.Report]?) -> Data {
        let object: [String: Any] = [
            "committed": report.committed.map { ["commit": $0.commit.hex, "notices": $0.notices.count] as [String: Any] } ?? NSNull(),
            "received": report.received.map(\.hex),
            "merge": report.merge?.hex ?? NSNull(),
            "conflicts": report.conflicts.map { ["copy": $0.copy, "of": $0.of] },
            "keptLocal": report.keptLocal,
            "incomingCopies": report.incomingCopies,
            "skipped": report.skipped.map { ["path": $0.path, "reason": $0.reason] },
            "pushed": report.pushed,
            "readOnly": report.readOnly,
            "localChangesKept": report.localChangesKept,
            "resumed": report.resumed,
            "rounds": report.rounds,
            "noticesDelivered": delivered?.reduce(0) { $0 + $1.delivered } ?? 0,
            "summary": report.summaryLine,
        ]
        var data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        data.append(0x0A)
        return data
    }
}
