import CohortBase
import CohortCollaboration
import Crypto
import Foundation
import Synchronization

/// A durable outbox: a notice counts as accepted once it is in the log on disk (fsynced); each sink
/// keeps its own place in the log (a cursor file, written atomically), so a crash and restart
/// delivers every notice at least once, and a slow or failing sink never holds back the others.
///
/// Several processes may use one outbox at once (two post-receive hooks, `cohort watch` beside
/// `cohort notices deliver`): accepting holds a lock on the log, and reads the log again under it when
/// another process wrote to it, so sequence numbers stay unique and a notice is accepted once; a
/// sink's run holds a lock of its own and reads the sink's place under it, so two processes never
/// deliver the same notice to one sink (only a crash makes a sink get a notice twice).
///
/// Layout of the directory: `log.jsonl` (`{"seq": N, "notice": {…}}` per line), `cursors/<sink>`
/// (the last sequence number the sink is done with), `failures.jsonl` (notices a sink gave up on),
/// `runs/<sink>` (what the sink's last run did), `locks/` (the log's lock and one per sink).
public final class NoticeOutbox: Sendable {
    /// Largest log read, in bytes.
    public static let maxLogBytes = 512 << 20
    /// Cursors are written after this many notices, and at the end of every run.
    static let cursorBatch = 256
    /// Seconds a sink's run waits, by default, for another process delivering to the same sink before
    /// leaving the rest to it (the holder looks at the log again when it is done).
    public static let deliveryWait: TimeInterval = 10
    /// Seconds accepting waits for another process writing the log (a post-receive hook that gives
    /// up loses its push's notices, so this is long).
    static let logWait: TimeInterval = 300

    /// One line of the log: `{"seq", "notice", "actorHandle", "envelope", "salt"}` (the handle,
    /// envelope and salt absent in older logs).
    public struct Entry: Codable, Sendable {
        public let seq: Int
        /// What the sinks are given.
        public let delivery: NoticeDelivery
        public var notice: Notice { delivery.notice }

        init(seq: Int, _ delivery: NoticeDelivery) {
            self.seq = seq
            self.delivery = delivery
        }

        private enum Keys: String, CodingKey { case seq }

        public init(from decoder: any Decoder) throws {
            seq = try decoder.container(keyedBy: Keys.self).decode(Int.self, forKey: .seq)
            delivery = try NoticeDelivery(from: decoder)
        }

        public func encode(to encoder: any Encoder) throws {
            try delivery.encode(to: encoder)
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(seq, forKey: .seq)
        }
    }

    /// What one sink's run did.
    public struct Report: Sendable, Codable {
        public let sink: String
        public let delivered: Int
        public let gaveUp: Int
        /// Notices still waiting, and why the run stopped early (nil when nothing is left).
        public let pending: Int
        public let stoppedBecause: String?
    }

    /// What this process last saw of the log, and where it stood on disk then.
    private struct State {
        var nextSeq = 1
        var ids: Set<String> = []
        var seen: FileStamp?
    }

    public let directory: URL
    /// Seconds a sink's run waits for another process delivering to the same sink.
    let deliveryWait: TimeInterval
    private let state = Mutex(State())

    public init(directory: URL, deliveryWait: TimeInterval = NoticeOutbox.deliveryWait) throws {
        self.directory = directory
        self.deliveryWait = deliveryWait
        try AtomicFile.createDirectory(directory.appendingPathComponent("cursors"), mode: 0o700)
        try AtomicFile.createDirectory(directory.appendingPathComponent("locks"), mode: 0o700)
        try AtomicFile.createDirectory(directory.appendingPathComponent("runs"), mode: 0o700)
    }

    var logURL: URL { directory.appendingPathComponent("log.jsonl") }

    /// Whether notices were ever taken in here (the log exists).
    public var hasLog: Bool { Self.hasLog(in: directory) }

    /// Whether the outbox in `directory` ever took a notice in, without making its folders.
    public static func hasLog(in directory: URL) -> Bool {
        FileManager.default.fileExists(atPath: directory.appendingPathComponent("log.jsonl").path)
    }

    private var logLockURL: URL { directory.appendingPathComponent("locks/log") }

    private var busyLog: CohortError {
        CohortError(.busy, "another process is still writing the notice outbox \(directory.path) after \(Int(Self.logWait)) s",
                    hint: "try again when it is done")
    }

    /// Runs `body` holding the log's lock (writes to the log and to the failures record, and reads of
    /// the log that must not see an append a failure is about to take back). Two holders in one
    /// process are kept apart by the lock too: each opens the file itself.
    private func withLogLock<T>(_ body: () throws -> T) async throws -> T {
        guard let lock = try await FileLock.acquire(logLockURL, wait: Self.logWait) else { throw busyLog }
        defer { lock.release() }
        return try body()
    }

    /// Brings this process's view of the log up to date, holding the log's lock: a torn last line is
    /// one a writer that died left, and is cut off.
    private func refresh(_ state: inout State) throws {
        guard FileStamp(logURL) != state.seen else { return }
        let entries = try Self.readLog(logURL, repair: true)
        state.nextSeq = (entries.last?.seq ?? 0) + 1
        state.ids = Set(entries.map(\.notice.id))
        state.seen = FileStamp(logURL)
    }

    /// Appends the notices not accepted before (by id) and fsyncs; returns how many were new.
    @discardableResult
    public func accept(_ deliveries: [NoticeDelivery]) async throws -> Int {
        guard !deliveries.isEmpty else { return 0 }
        return try await withLogLock {
            try state.withLock { state in
                try refresh(&state)
                var lines = Data()
                var accepted = 0
                var ids = state.ids
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                encoder.dateEncodingStrategy = .iso8601
                for delivery in deliveries where ids.insert(delivery.notice.id).inserted {
                    lines.append(try encoder.encode(Entry(seq: state.nextSeq + accepted, delivery)))
                    lines.append(UInt8(ascii: "\n"))
                    accepted += 1
                }
                guard accepted > 0 else { return 0 }
                do {
                    try AtomicFile.append(lines, to: logURL)
                } catch {
                    state.seen = nil
                    throw error
                }
                state.nextSeq += accepted
                state.ids = ids
                state.seen = FileStamp(logURL)
                return accepted
            }
        }
    }

    /// Gives each sink seen for the first time (no place yet) its place: the log's end, so that it
    /// receives what is taken in from now on, or with `history = "all"` its start, so that it
    /// receives everything the log holds too. Call it before taking in the notices a new sink should
    /// have, and after taking in the history it should not.
    public func place(_ sinks: [SinkSpec]) async throws {
        let fresh = sinks.filter { !FileManager.default.fileExists(atPath: cursorURL($0.name).path) }
        guard !fresh.isEmpty else { return }
        try await withLogLock {
            let end = try state.withLock { state in
                try refresh(&state)
                return state.nextSeq - 1
            }
            for sink in fresh where !FileManager.default.fileExists(atPath: cursorURL(sink.name).path) {
                try writeCursor(sink.name, sink.history == .all ? 0 : end)
            }
        }
    }

    /// The notices `sink` has not dealt with yet, in order.
    public func pending(for sink: String) throws -> [Entry] {
        let cursor = try readCursor(sink)
        return try Self.readLog(logURL, repair: false).filter { $0.seq > cursor }
    }

    /// The notices the sink `spec` describes has not dealt with yet; for one not placed yet, what
    /// `place` would give it (nothing of the log, or all of it with `history = "all"`).
    public func pending(for spec: SinkSpec) throws -> [Entry] {
        if !FileManager.default.fileExists(atPath: cursorURL(spec.name).path), spec.history == .new { return [] }
        return try pending(for: spec.name)
    }

    /// Builds the sinks `specs` describe, their state under `stateDirectory`, and delivers to them
    /// (see `deliver(to:)`), shutting them down after. A sink that cannot be built is reported as
    /// stopped, its notices left waiting, and the others go on.
    public func deliver(to specs: [SinkSpec], stateDirectory: URL) async -> [Report] {
        var sinks: [any NoticeSink] = []
        var unbuilt: [Report] = []
        for spec in specs {
            do {
                sinks.append(try spec.make(stateDirectory: stateDirectory))
            } catch {
                let waiting = (try? pending(for: spec).count) ?? 0
                let report = Report(sink: spec.name, delivered: 0, gaveUp: 0, pending: waiting, stoppedBecause: "the sink cannot start: \(error)")
                recordRun(report)
                unbuilt.append(report)
            }
        }
        let reports = await deliver(to: sinks)
        for sink in sinks { await sink.shutdown() }
        return (reports + unbuilt).sorted { $0.sink < $1.sink }
    }

    /// The log as it stands, read under the log's lock (so never a line an append that failed is
    /// about to take back), with its stamp.
    private func snapshot() async -> (log: Result<[Entry], any Error>, stamp: FileStamp?) {
        do {
            return try await withLogLock { (Result { try Self.readLog(logURL, repair: false) }, FileStamp(logURL)) }
        } catch {
            return (.failure(error), nil)
        }
    }

    /// Delivers what each sink has not had yet, every sink on its own task: each one stops at its first
    /// notice to retry (keeping its place), records and passes the ones it gives up on.
    public func deliver(to sinks: [any NoticeSink]) async -> [Report] {
        let first = await snapshot()
        return await withTaskGroup(of: Report.self) { group in
            for sink in sinks {
                group.addTask {
                    let report = await self.run(sink, first)
                    self.recordRun(report)
                    return report
                }
            }
            var reports: [Report] = []
            for await report in group { reports.append(report) }
            return reports.sorted { $0.sink < $1.sink }
        }
    }

    /// One sink's turn. Another process delivering to the sink goes first, and the sink's place is
    /// read after it is done. Whoever lets go of a sink looks at the log again: if notices came in
    /// meanwhile (whose process may have stopped waiting for this one), it takes the sink again, if no
    /// one else has, and delivers them too.
    private func run(_ sink: any NoticeSink, _ first: (log: Result<[Entry], any Error>, stamp: FileStamp?)) async -> Report {
        var current = first
        var total = Report(sink: sink.name, delivered: 0, gaveUp: 0, pending: 0, stoppedBecause: nil)
        var wait = deliveryWait
        while true {
            let lock: FileLock
            do {
                guard let held = try await FileLock.acquire(sinkLockURL(sink.name), wait: wait) else {
                    guard wait > 0 else { return total }  // someone else took it, and looks again when done
                    let cursor = (try? readCursor(sink.name)) ?? 0
                    let waiting = (try? current.log.get().filter { $0.seq > cursor }.count) ?? 0
                    let reason = Task.isCancelled ? "the delivery was cancelled while another process was delivering to this sink"
                        : "another process is still delivering to this sink after \(Int(wait)) s; it delivers what is left when it is done, or if it stops on a failure, the next delivery does"
                    return Report(sink: sink.name, delivered: total.delivered, gaveUp: total.gaveUp, pending: waiting, stoppedBecause: reason)
                }
                lock = held
            } catch {
                return Report(sink: sink.name, delivered: total.delivered, gaveUp: total.gaveUp, pending: 0, stoppedBecause: "\(error)")
            }
            let turn = await deliverHolding(sink, log: current.log)
            lock.release()
            total = Report(sink: sink.name, delivered: total.delivered + turn.delivered, gaveUp: total.gaveUp + turn.gaveUp,
                           pending: turn.pending, stoppedBecause: turn.stoppedBecause)
            guard turn.stoppedBecause == nil, FileStamp(logURL) != current.stamp else { return total }
            current = await snapshot()
            wait = 0
        }
    }

    /// Delivers, holding the sink's lock, what `log` has past the sink's place.
    private func deliverHolding(_ sink: any NoticeSink, log: Result<[Entry], any Error>) async -> Report {
        let entries: [Entry]
        var done: Int
        do {
            done = try readCursor(sink.name)
            entries = try log.get().filter { $0.seq > done }
        } catch {
            return Report(sink: sink.name, delivered: 0, gaveUp: 0, pending: 0, stoppedBecause: "cannot read the outbox: \(error)")
        }
        if !entries.isEmpty, let stateful = sink as? any StatefulNoticeSink {
            // What the last holder of the lock left: its retries, a disabled endpoint.
            do {
                try stateful.reload()
            } catch {
                return Report(sink: sink.name, delivered: 0, gaveUp: 0, pending: entries.count, stoppedBecause: "\(error)")
            }
        }
        var delivered = 0
        var gaveUp = 0
        var unsaved = 0
        /// Saves the sink's place and reports; `reason` nil when everything went.
        func stop(at index: Int, because reason: String?) -> Report {
            var reason = reason
            if unsaved > 0 {
                do {
                    try writeCursor(sink.name, done)
                } catch {
                    reason = (reason.map { "\($0); " } ?? "") + "its place could not be saved (\(error)), so what it had may come again"
                }
            }
            return Report(sink: sink.name, delivered: delivered, gaveUp: gaveUp, pending: entries.count - index, stoppedBecause: reason)
        }
        for (index, entry) in entries.enumerated() {
            do {
                try await sink.deliver(entry.delivery)
                delivered += 1
            } catch let failure as SinkFailure where failure.kind == .giveUp {
                // A notice given up on moves the place only once it is recorded.
                do {
                    try await recordFailure(sink: sink.name, entry: entry, reason: failure.reason)
                } catch {
                    return stop(at: index, because: "gave up on notice \(entry.notice.id) (\(failure.reason)) and cannot record it: \(error)")
                }
                gaveUp += 1
            } catch {
                return stop(at: index, because: "\(error)")
            }
            done = entry.seq
            unsaved += 1
            if unsaved >= Self.cursorBatch {
                do {
                    try writeCursor(sink.name, done)
                    unsaved = 0
                } catch {
                    return stop(at: index + 1, because: "cannot save its place: \(error)")
                }
            }
        }
        return stop(at: entries.count, because: nil)
    }

    /// A sink's standing, for `cohort status`: the notices it gave up on that are still recorded, and
    /// why its last run stopped early (nil when it delivered everything it had).
    public struct Standing: Sendable {
        public let givenUp: Int
        public let stoppedBecause: String?
    }

    /// How each of `sinks` stands, by name.
    public func standings(of sinks: [String]) -> [String: Standing] {
        let failures = (try? readFailures()) ?? []
        return Dictionary(uniqueKeysWithValues: sinks.map { sink in
            let last = (try? AtomicFile.read(runURL(sink), maxBytes: 64 << 10, what: "last delivery"))
                .flatMap { try? JSONDecoder().decode(Report.self, from: $0) }
            return (sink, Standing(givenUp: failures.filter { $0.sink == sink }.count, stoppedBecause: last?.stoppedBecause))
        })
    }

    /// Keeps what a sink's last run did (`runs/<sink>`), for `standings(of:)`.
    func recordRun(_ report: Report) {
        guard let data = try? JSONEncoder().encode(report) else { return }
        try? AtomicFile.write(data, to: runURL(report.sink), mode: 0o600, replacing: true)
    }

    private func runURL(_ sink: String) -> URL {
        directory.appendingPathComponent("runs/\(Self.fileName(for: sink))")
    }

    // Cursors: one small file per sink, named by the sink's name made safe for a file system.

    private func cursorURL(_ sink: String) -> URL {
        directory.appendingPathComponent("cursors/\(Self.fileName(for: sink))")
    }

    /// Held by the process delivering to `sink` (or delivering again what it gave up on).
    private func sinkLockURL(_ sink: String) -> URL {
        directory.appendingPathComponent("locks/\(Self.fileName(for: sink))")
    }

    /// A file or folder name for a sink: its name made safe for any file system, and a short digest
    /// of it so that two names never share one.
    public static func fileName(for sink: String) -> String {
        let safe = String(sink.unicodeScalars.map { CharacterSet.alphanumerics.contains($0) || "._-".unicodeScalars.contains($0) ? Character($0) : "_" }.prefix(48))
        return "\(safe)-\(Data(SHA256.hash(data: Data(sink.utf8)).prefix(4)).hexString)"
    }

    /// The last sequence number `sink` is done with: 0 before its first delivery; an error when its
    /// cursor is there but cannot be read (delivering everything again would flood the sink).
    func readCursor(_ sink: String) throws -> Int {
        let url = cursorURL(sink)
        guard FileManager.default.fileExists(atPath: url.path) else { return 0 }
        let data = try AtomicFile.read(url, maxBytes: 64, what: "cursor")
        guard let value = Int(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)), value >= 0 else {
            throw CohortError(.malformed, "the place of sink \(sink) in the outbox (\(url.path)) is not a number",
                              hint: "write the last sequence number it had into the file, or remove it to deliver everything again")
        }
        return value
    }

    private func writeCursor(_ sink: String, _ seq: Int) throws {
        try AtomicFile.write(Data("\(seq)\n".utf8), to: cursorURL(sink), mode: 0o600, replacing: true)
    }

    private func recordFailure(sink: String, entry: Entry, reason: String) async throws {
        let record: [String: Any] = ["sink": sink, "seq": entry.seq, "id": entry.notice.id, "reason": reason,
                                     "time": ISO8601DateFormatter().string(from: Date())]
        var line = try JSONSerialization.data(withJSONObject: record, options: [.sortedKeys])
        line.append(UInt8(ascii: "\n"))
        try await withLogLock { try AtomicFile.append(line, to: failuresURL) }
    }

    var failuresURL: URL { directory.appendingPathComponent("failures.jsonl") }

    // The log.

    static func readLog(_ url: URL, repair: Bool) throws -> [Entry] {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try AtomicFile.readLines(url, maxBytes: maxLogBytes, what: "notice outbox", repair: repair)
            .compactMap { try? decoder.decode(Entry.self, from: $0) }
    }
}

extension NoticeOutbox {
    fileprivate struct FailureRecord: Codable {
        var sink: String
        var seq: Int
        var id: String
        var reason: String
        var time: String
    }

    /// Delivers again the notices `sink` gave up on (recorded in `failures.jsonl`); those that go
    /// through now are struck from the record, the others stay with their new reason. Holds the
    /// sink's lock, so no delivery to the sink runs meanwhile; a sink that keeps state is re-enabled
    /// first, under the lock.
    public func replay(_ sink: any NoticeSink) async throws -> Report {
        guard let lock = try await FileLock.acquire(sinkLockURL(sink.name), wait: deliveryWait) else {
            throw CohortError(.busy, "another process is still delivering to sink \(sink.name) after \(Int(deliveryWait)) s",
                              hint: "try again when it is done")
        }
        defer { lock.release() }
        if let stateful = sink as? any StatefulNoticeSink {
            try stateful.reload()
            try stateful.reenable()
        }
        guard FileManager.default.fileExists(atPath: failuresURL.path) else {
            return Report(sink: sink.name, delivered: 0, gaveUp: 0, pending: 0, stoppedBecause: nil)
        }
        let mine = Set(try readFailures().filter { $0.sink == sink.name }.map(\.seq))
        let entries = try Self.readLog(logURL, repair: false).filter { mine.contains($0.seq) }
        var failed: [FailureRecord] = []
        var delivered = 0
        for entry in entries {
            do {
                try await sink.deliver(entry.delivery)
                delivered += 1
            } catch {
                failed.append(FailureRecord(sink: sink.name, seq: entry.seq, id: entry.notice.id, reason: "\(error)",
                                            time: ISO8601DateFormatter().string(from: Date())))
            }
        }
        // Read again under the log's lock: other sinks' failures recorded meanwhile stay.
        try await withLogLock {
            let kept = try readFailures().filter { !($0.sink == sink.name && mine.contains($0.seq)) } + failed
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let text = try kept.map { String(decoding: try encoder.encode($0), as: UTF8.self) + "\n" }.joined()
            try AtomicFile.write(Data(text.utf8), to: failuresURL, mode: 0o600, replacing: true)
        }
        return Report(sink: sink.name, delivered: delivered, gaveUp: entries.count - delivered, pending: 0, stoppedBecause: nil)
    }

    fileprivate func readFailures() throws -> [FailureRecord] {
        let decoder = JSONDecoder()
        return try AtomicFile.readLines(failuresURL, maxBytes: Self.maxLogBytes, what: "delivery failures", repair: false)
            .compactMap { try? decoder.decode(FailureRecord.self, from: $0) }
    }
}
