import ArgumentParser
import CohortBase
import CohortNotices
import CohortRemote
import CohortSync
import CohortVerification
import CohortWorkspace
import Foundation

struct SyncCommand: AsyncCohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Commit local changes, fetch, verify, merge (conflicts become copies), push, deliver notices.",
        discussion: """
        One sync at a time per workspace (a second one waits, see --wait). An interrupted sync (a crash, \
        a kill) is finished by the next one. More than --mass-delete-share of the tracked files deleted \
        is held back unless --allow-mass-delete. A read-only participant's sync only pulls; local edits \
        stay in the folder. See Docs/Sync.md.
        """
    )

    @Option(name: .shortAndLong, help: ArgumentHelp("The message of the commit of local changes.", valueName: "MESSAGE"))
    var message: String?

    @Option(help: ArgumentHelp("The remote to sync with.", valueName: "NAME"))
    var remote = "origin"

    @Flag(name: .customLong("allow-mass-delete"), help: "Commit deletions even of more than the share below.")
    var allowMassDelete = false

    @Option(name: .customLong("mass-delete-share"), parsing: .unconditional, help: ArgumentHelp("Hold back deleting more than this share of tracked files (0 to 1).", valueName: "SHARE"))
    var massDeleteShare = 0.5

    @Option(parsing: .unconditional, help: ArgumentHelp("Seconds to wait for another sync of this workspace.", valueName: "S"))
    var wait = Seconds(60)

    @Flag(help: "Print the report as JSON.")
    var json = false

    @OptionGroup var workspace: WorkspaceOptions

    func validate() throws {
        guard (0...1).contains(massDeleteShare) else { throw ValidationError("--mass-delete-share must be between 0 and 1") }
        guard wait.value >= 0, wait.value <= 86_400 else { throw ValidationError("--wait must be 0 to 86400 seconds") }
    }

    func execute() async throws {
        var options = SyncOptions()
        options.message = message
        options.remote = remote
        options.allowMassDelete = allowMassDelete
        options.massDeleteShare = massDeleteShare
        options.wait = wait.value
        options.progress = json ? nil : TerminalProgress.make()
        let opened: Workspace
        var report: SyncReport
        do {
            opened = try workspace.open()
            report = try await SyncRun.run(opened, options: options)
        } catch let error as CohortError where json {
            // Even a sync that could not start answers in JSON, naming the step.
            var failed = SyncReport()
            failed.failure = SyncReport.Failure(step: .prepare, error: error)
            Terminal.write(SyncRun.json(failed, delivered: nil))
            throw ExitCode(SyncRun.exitStatus(failed))
        }
        TerminalProgress.finish()
        let delivered = await SyncRun.deliver(opened, report: &report)
        if json {
            Terminal.write(SyncRun.json(report, delivered: delivered))
        } else {
            for line in SyncRun.lines(report, delivered: delivered) { Terminal.print(line) }
            if let error = SyncRun.error(report) { Terminal.error(error.description) }
        }
        let status = SyncRun.exitStatus(report)
        if status != 0 { throw ExitCode(status) }
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
                // Past the lock, every failure is in the report: only a busy lock throws.
                continuation.resume(with: Result { try box.workspace.sync(options, client: client) })
            }.start()
        }
    }

    /// Delivers the notices that arrived to the workspace's sinks; a failure there (a bad sink
    /// configuration) is the report's failure unless an earlier step failed.
    static func deliver(_ workspace: Workspace, report: inout SyncReport) async -> [NoticeOutbox.Report]? {
        do {
            return try await WorkspaceSinks.deliver(workspace)
        } catch {
            if report.failure == nil {
                let failure = CohortError(error, otherwise: .io)
                report.failure = SyncReport.Failure(step: .deliver, error: failure)
            }
            return nil
        }
    }

    /// The error the sync ends with: its failure, or the paths it could not write.
    static func error(_ report: SyncReport) -> CohortError? {
        if let failure = report.failure {
            let error = failure.error
            if error.code == .network, report.committed != nil || report.merge != nil {
                let count = report.committed?.notices.count ?? 0
                let kept = count > 0 ? "committed \(Terminal.count(count, "change")) here" : "your merge is committed here"
                return CohortError(.network, "\(error.reason); \(kept), and they go out at the next sync that reaches the remote",
                                   hint: error.hint)
            }
            return error
        }
        let waiting = report.unwrittenToReport
        guard let first = waiting.first else { return nil }
        return CohortError(.io, "\(waiting.count) path\(waiting.count == 1 ? " was" : "s were") not written to this folder (first: \(first.path): \(first.reason))",
                           hint: "nothing of yours was changed and nothing is shared in their place; clear the way and run `cohort sync` again")
    }

    /// 0 when all went well; 75 (EX_TEMPFAIL) when the remote could not be reached, so that scripts
    /// tell "saved here, not yet shared" from a failure; 1 otherwise.
    static func exitStatus(_ report: SyncReport) -> Int32 {
        guard let error = error(report) else { return 0 }
        return error.code == .network ? 75 : 1
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
        let arrived = report.received.filter { $0 != report.merge }.count
        if arrived > 0 {
            lines.append("received \(Terminal.count(arrived, "commit")): " + describe(report.receivedNotices.filter { $0.type != .mention }.map {
                "\($0.type.rawValue) \($0.data["path"] ?? $0.data["handle"] ?? "") (\(report.name($0.actor)))"
            }))
        }
        for conflict in report.conflicts {
            lines.append("conflict: \(conflict.of) was changed on both sides; the collaboration's version stays, yours is \"\(conflict.copy)\"")
        }
        for (path, copy) in report.keptLocal {
            lines.append("kept your edit of \(path)" + (copy.map { "; the incoming version is \"\($0)\"" } ?? " (the collaboration deleted or relinked it)"))
        }
        for (path, copy) in report.movedAside {
            lines.append("your edit of \(path) is saved as \"\(copy)\" (read only: not shared); the file now follows the collaboration")
        }
        for path in report.unwrittenToReport {
            lines.append("not written to this folder: \(path.path) (\(path.reason))")
        }
        if report.pushed { lines.append("pushed") }
        if let delivered {
            for sink in delivered where sink.delivered > 0 || sink.gaveUp > 0 || sink.stoppedBecause != nil {
                lines.append("notices: \(sink.delivered) delivered to \(sink.sink)" + sink.trouble())
            }
        }
        if let failure = report.failure { lines.append("stopped at \(failure.step.rawValue)") }
        if lines.isEmpty || (lines.count == 1 && report.resumed) { lines.append("up to date") }
        return lines
    }

    private static func describe(_ items: [String]) -> String {
        items.isEmpty ? "no notices" : items.prefix(8).joined(separator: ", ") + (items.count > 8 ? ", and \(items.count - 8) more" : "")
    }

    static func json(_ report: SyncReport, delivered: [NoticeOutbox.Report]?) -> Data {
        var object: [String: Any] = [
            "committed": report.committed.map { ["commit": $0.commit.hex, "notices": $0.notices.count] as [String: Any] } ?? NSNull(),
            "received": report.received.filter { $0 != report.merge }.map(\.hex),
            "receivedNotices": report.receivedNotices.map {
                ["type": $0.type.rawValue, "path": $0.data["path"] ?? NSNull(), "by": report.name($0.actor)] as [String: Any]
            },
            "merge": report.merge?.hex ?? NSNull(),
            "conflicts": report.conflicts.map { ["copy": $0.copy, "of": $0.of] },
            "keptLocal": report.keptLocal.map(\.path),
            "incomingCopies": report.keptLocal.compactMap(\.copy),
            "movedAside": report.movedAside.map { ["path": $0.path, "copy": $0.copy] },
            "unwritten": report.unwrittenToReport.map { ["path": $0.path, "reason": $0.reason] },
            "pushed": report.pushed,
            "readOnly": report.readOnly,
            "localChangesKept": report.localChangesKept,
            "resumed": report.resumed,
            "rounds": report.rounds,
            "noticesDelivered": delivered?.reduce(0) { $0 + $1.delivered } ?? 0,
            "sinks": (delivered ?? []).map {
                ["name": $0.sink, "delivered": $0.delivered, "givenUp": $0.gaveUp, "pending": $0.pending,
                 "stoppedBecause": $0.stoppedBecause ?? NSNull()] as [String: Any]
            },
            "summary": report.summaryLine,
            "exitStatus": exitStatus(report),
        ]
        if let error = error(report) {
            object["failed"] = ["step": report.failure?.step.rawValue ?? "checkout", "code": error.code.rawValue,
                                "message": error.reason, "hint": error.hint ?? NSNull()] as [String: Any]
        } else {
            object["failed"] = NSNull()
        }
        var data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        data.append(0x0A)
        return data
    }
}
