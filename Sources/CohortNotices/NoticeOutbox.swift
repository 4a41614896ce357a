import CohortCollaboration
import CohortIdentity
import Crypto
import Foundation
import Synchronization

/// A durable outbox: a notice counts as accepted once it is in the log on disk (fsynced); each sink
/// keeps its own place in the log (a cursor file, written atomically), so a crash and restart
/// delivers every notice at least once, and a slow or failing sink never holds back the others.
///
/// Layout of the directory: `log.jsonl` (`{"seq": N, "notice": {…}}` per line), `cursors/<sink>`
/// (the last sequence number the sink is done with), `failures.jsonl` (notices a sink gave up on).
public final class NoticeOutbox: Sendable {
    /// Largest log read, in bytes.
    public static let maxLogBytes = 512 << 20
    /// Cursors are written after this many notices, and at the end of every run.
    static let cursorBatch = 256

    public struct Entry: Codable, Sendable {
        public let seq: Int
        public let notice: Notice
        /// The actor's handle as the collaboration named them when the notice was taken in (absent in
        /// older logs and for roots the membership does not name).
        public var actorHandle: String?
    }

    /// What one sink's run did.
    public struct Report: Sendable {
        public let sink: String
        public let delivered: Int
        public let gaveUp: Int
        /// Notices still waiting, and why the run stopped early (nil when nothing is left).
        public let pending: Int
        public let stoppedBecause: String?
    }

    private struct State {
        var nextSeq: Int
        var ids: Set<String>
    }

    public let directory: URL
    private let state: Mutex<State>

    public init(directory: URL) throws {
        self.directory = directory
        try AtomicFile.createDirectory(directory.appendingPathComponent("cursors"), mode: 0o700)
        let entries = try Self.readLog(directory.appendingPathComponent("log.jsonl"), repair: true)
        state = Mutex(State(nextSeq: (entries.last?.seq ?? 0) + 1, ids: Set(entries.map(\.notice.id))))
    }

    var logURL: URL { directory.appendingPathComponent("log.jsonl") }


    /// Appends the notices not accepted before (by id) and fsyncs; returns how many were new.
    @discardableResult
    public func accept(_ notices: [Notice], handles: [String: String] = [:]) throws -> Int {
        try state.withLock { state in
            var lines = Data()
            var accepted = 0
            var ids = state.ids
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            encoder.dateEncodingStrategy = .iso8601
            for notice in notices where ids.insert(notice.id).inserted {
                lines.append(try encoder.encode(Entry(seq: state.nextSeq + accepted, notice: notice, actorHandle: handles[notice.actor])))
                lines.append(UInt8(ascii: "\n"))
                accepted += 1
            }
            guard accepted > 0 else { return 0 }
            try AtomicFile.append(lines, to: logURL)
            state.nextSeq += accepted
            state.ids = ids
            return accepted
        }
    }

    /// The notices `sink` has not dealt with yet, in order.
    public func pending(for sink: String) throws -> [Entry] {
        let cursor = readCursor(sink)
        return try Self.readLog(logURL, repair: false).filter { $0.seq > cursor }
    }

    /// Delivers what each sink has not had yet, every sink on its own task: each one stops at its first
    /// notice to retry (keeping its place), records and passes the ones it gives up on.
    public func deliver(to sinks: [any NoticeSink]) async -> [Report] {
        let log = Result { try Self.readLog(logURL, repair: false) }
        return await withTaskGroup(of: Report.self) { group in
            for sink in sinks {
                group.addTask { await self.run(sink, log: log) }
            }
            var reports: [Report] = []
            for await report in group { reports.append(report) }
            return reports.sorted { $0.sink < $1.sink }
        }
    }

    private func run(_ sink: any NoticeSink, log: Result<[Entry], any Error>) async -> Report {
        let entries: [Entry]
        do {
            let cursor = readCursor(sink.name)
            entries = try log.get().filter { $0.seq > cursor }
        } catch {
            return Report(sink: sink.name, delivered: 0, gaveUp: 0, pending: 0, stoppedBecause: "cannot read the outbox: \(error)")
        }
        var delivered = 0
        var gaveUp = 0
        var done = readCursor(sink.name)
        var unsaved = 0
        defer { if unsaved > 0 { try? writeCursor(sink.name, done) } }
        for (index, entry) in entries.enumerated() {
            do {
                try await sink.deliver(entry.notice, actorHandle: entry.actorHandle)
                delivered += 1
            } catch let failure as SinkFailure where failure.kind == .giveUp {
                recordFailure(sink: sink.name, entry: entry, reason: failure.reason)
                gaveUp += 1
            } catch {
                if unsaved > 0 { try? writeCursor(sink.name, done) }
                unsaved = 0
                return Report(sink: sink.name, delivered: delivered, gaveUp: gaveUp, pending: entries.count - index,
                              stoppedBecause: "\(error)")
            }
            done = entry.seq
            unsaved += 1
            if unsaved >= Self.cursorBatch {
                try? writeCursor(sink.name, done)
                unsaved = 0
            }
        }
        return Report(sink: sink.name, delivered: delivered, gaveUp: gaveUp, pending: 0, stoppedBecause: nil)
    }

    // Cursors: one small file per sink, named by the sink's name made safe for a file system.

    private func cursorURL(_ sink: String) -> URL {
        directory.appendingPathComponent("cursors/\(Self.fileName(for: sink))")
    }

    /// A file or folder name for a sink: its name made safe for any file system, and a short digest
    /// of it so that two names never share one.
    public static func fileName(for sink: String) -> String {
        let safe = String(sink.unicodeScalars.map { CharacterSet.alphanumerics.contains($0) || "._-".unicodeScalars.contains($0) ? Character($0) : "_" }.prefix(48))
        return "\(safe)-\(Data(SHA256.hash(data: Data(sink.utf8)).prefix(4)).hexString)"
    }

    func readCursor(_ sink: String) -> Int {
        guard let data = try? AtomicFile.read(cursorURL(sink), maxBytes: 64, what: "cursor") else { return 0 }
        return Int(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    private func writeCursor(_ sink: String, _ seq: Int) throws {
        try AtomicFile.write(Data("\(seq)\n".utf8), to: cursorURL(sink), mode: 0o600, replacing: true)
    }

    private func recordFailure(sink: String, entry: Entry, reason: String) {
        let record: [String: Any] = ["sink": sink, "seq": entry.seq, "id": entry.notice.id, "reason": reason,
                                     "time": ISO8601DateFormatter().string(from: Date())]
        guard var line = try? JSONSerialization.data(withJSONObject: record, options: [.sortedKeys]) else { return }
        line.append(UInt8(ascii: "\n"))
        try? AtomicFile.append(line, to: directory.appendingPathComponent("failures.jsonl"))
    }

    // The log.

    static func readLog(_ url: URL, repair: Bool) throws -> [Entry] {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try AtomicFile.readLines(url, maxBytes: maxLogBytes, what: "notice outbox", repair: repair)
            .compactMap { try? decoder.decode(Entry.self, from: $0) }
    }
}

extension NoticeOutbox {
    private struct FailureRecord: Codable {
        var sink: String
        var seq: Int
        var id: String
        var reason: String
        var time: String
    }

    /// Delivers again the notices `sink` gave up on (recorded in `failures.jsonl`); those that go
    /// through now are struck from the record, the others stay with their new reason.
    public func replay(_ sink: any NoticeSink) async throws -> Report {
        let url = directory.appendingPathComponent("failures.jsonl")
        guard FileManager.default.fileExists(atPath: url.path) else {
            return Report(sink: sink.name, delivered: 0, gaveUp: 0, pending: 0, stoppedBecause: nil)
        }
        let decoder = JSONDecoder()
        let records = try AtomicFile.read(url, maxBytes: Self.maxLogBytes, what: "delivery failures")
            .split(separator: UInt8(ascii: "\n")).compactMap { try? decoder.decode(FailureRecord.self, from: Data($0)) }
        let mine = Set(records.filter { $0.sink == sink.name }.map(\.seq))
        let entries = try Self.readLog(logURL, repair: false).filter { mine.contains($0.seq) }
        var kept = records.filter { $0.sink != sink.name }
        var delivered = 0
        for entry in entries {
            do {
                try await sink.deliver(entry.notice, actorHandle: entry.actorHandle)
                delivered += 1
            } catch {
                kept.append(FailureRecord(sink: sink.name, seq: entry.seq, id: entry.notice.id, reason: "\(error)",
                                          time: ISO8601DateFormatter().string(from: Date())))
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let text = try kept.map { String(decoding: try encoder.encode($0), as: UTF8.self) + "\n" }.joined()
        try AtomicFile.write(Data(text.utf8), to: url, mode: 0o600, replacing: true)
        return Report(sink: sink.name, delivered: delivered, gaveUp: entries.count - delivered, pending: 0, stoppedBecause: nil)
    }
}
