import ArgumentParser
import CohortBase
import CohortSync
import CohortWorkspace
import Dispatch
import Foundation
import Synchronization

struct WatchCommand: AsyncCohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Sync whenever local changes settle, and every --interval seconds; stop with Ctrl-C or SIGTERM.",
        discussion: "Changes are noticed by looking at the files every second; a sync starts once nothing changed for --settle seconds. A stop request lets a running sync finish."
    )

    @Option(parsing: .unconditional, help: ArgumentHelp("Seconds between syncs when nothing changes locally.", valueName: "S"))
    var interval = Seconds(60)

    @Option(parsing: .unconditional, help: ArgumentHelp("Seconds local changes must be quiet before a sync.", valueName: "S"))
    var settle = Seconds(2)

    @Option(help: ArgumentHelp("The remote to sync with.", valueName: "NAME"))
    var remote = "origin"

    @OptionGroup var workspace: WorkspaceOptions

    func validate() throws {
        guard interval.value >= 1, interval.value <= 86_400 else { throw ValidationError("--interval must be 1 to 86400 seconds") }
        guard settle.value >= 0.2, settle.value <= 3600 else { throw ValidationError("--settle must be 0.2 to 3600 seconds") }
    }

    func execute() async throws {
        let opened = try workspace.open()
        let stop = StopSignal()
        var options = SyncOptions()
        options.remote = remote
        options.message = "Sync"
        var lastSync = Date.distantPast
        var lastSeen = FolderSnapshot(of: opened.directory)
        var changedAt: Date?
        // After a failed sync (offline, say) the next waits 5 s, then twice as long each time up to
        // five minutes, whatever changes; a sync that works resets it.
        var failures = 0
        var retryAt = Date.distantPast
        Terminal.note("watching \(opened.directory.path); Ctrl-C stops")
        while !stop.requested {
            let now = Date()
            let snapshot = FolderSnapshot(of: opened.directory)
            if snapshot != lastSeen {
                lastSeen = snapshot
                changedAt = now
            }
            let settled = changedAt.map { now.timeIntervalSince($0) >= settle.value } ?? false
            if (settled || now.timeIntervalSince(lastSync) >= interval.value), now >= retryAt {
                changedAt = nil
                lastSync = now
                var failed: CohortError?
                do {
                    var report = try await SyncRun.run(opened, options: options)
                    let delivered = await SyncRun.deliver(opened, report: &report)
                    let lines = SyncRun.lines(report, delivered: delivered)
                    if lines != ["up to date"] {
                        for line in lines { Terminal.print("\(Date().formatted(.iso8601)) \(line)") }
                    }
                    failed = SyncRun.error(report)
                } catch let error as CohortError {
                    failed = error
                }
                if let failed {
                    failures += 1
                    let delay = min(300, 5 * pow(2, Double(min(failures - 1, 8))))
                    retryAt = Date().addingTimeInterval(delay)
                    Terminal.note("\(Date().formatted(.iso8601)) error: \(failed.description) (next try in \(Int(delay)) s)")
                } else {
                    failures = 0
                    retryAt = .distantPast
                }
                lastSeen = FolderSnapshot(of: opened.directory)
            }
            try? await Task.sleep(for: .seconds(1))
        }
        Terminal.note("stopped")
    }
}

/// Names, sizes and modification times of the workspace's files (outside .git): cheap to take every
/// second, and different whenever a file is written, added or removed.
struct FolderSnapshot: Equatable {
    private var entries: [String: [Double]] = [:]

    init(of directory: URL) {
        let keys: [URLResourceKey] = [.contentModificationDateKey, .fileSizeKey, .isRegularFileKey]
        guard let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: keys) else { return }
        for case let url as URL in walker {
            if url.lastPathComponent == ".git" {
                walker.skipDescendants()
                continue
            }
            guard let values = try? url.resourceValues(forKeys: Set(keys)), values.isRegularFile == true else { continue }
            entries[url.path] = [values.contentModificationDate?.timeIntervalSince1970 ?? 0, Double(values.fileSize ?? 0)]
        }
    }
}
