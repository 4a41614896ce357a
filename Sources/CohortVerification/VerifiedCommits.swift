import CohortBase
import CohortGit
import Foundation

/// Commits already verified in a repository, remembered in `<git dir>/cohort/verified` (a header
/// naming the rules' version, then one id per line, appended), so `cohort verify` only checks what is
/// new. A file written under other rules is ignored and replaced. Losing it only costs time.
public struct VerifiedCommits {
    static let maxFileBytes = 256 << 20
    /// Changes whenever the rules change, so that commits verified under older rules are checked again.
    static let header = "cohort-verified rules-3\n"
    public let url: URL

    public init(repository: Repository) {
        url = repository.cohortDirectory.verifiedCommits
    }

    /// The remembered ids; unreadable lines are skipped, and a file from other rules counts as empty.
    public func load() -> Set<ObjectID> {
        var ids = Set<ObjectID>()
        forEachLine(reserving: { ids.reserveCapacity($0) }) { line in
            if let id = ObjectID(hexDigits: line) { ids.insert(id) }
        }
        return ids
    }

    /// Those of `ids` that are remembered: for a push, which asks about the few commits it brings,
    /// only lines starting like one of them are read as ids (a hook that read every id on every
    /// push spent more on that than on a one-commit push's rules: Docs/Benchmarks.md).
    public func remembered(among ids: some Collection<ObjectID>) -> Set<ObjectID> {
        guard !ids.isEmpty else { return [] }
        let wanted = Set(ids)
        // The first eight hex digits, lowercase (`remember` writes them so; a line in capitals reads
        // as `load` reads it): 0x20 set in each byte turns A-F into a-f and leaves the digits as they
        // are. Whatever else it turns into a wanted start is still parsed, and refused, below.
        let lowercase: UInt64 = 0x2020_2020_2020_2020
        let starts = Set(wanted.map { Array($0.hex.utf8.prefix(8)).withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) } })
        // A push's few starts are compared one by one (cheaper than hashing each line's).
        let few = starts.count <= 16 ? Array(starts) : nil
        var found = Set<ObjectID>()
        forEachLine { line in
            guard line.count == 40 else { return }
            let start = line.loadUnaligned(as: UInt64.self) | lowercase
            guard few?.contains(start) ?? starts.contains(start), let id = ObjectID(hexDigits: line), wanted.contains(id) else { return }
            found.insert(id)
        }
        return found
    }

    /// Answers a push's questions about the commits its walks list: a few about few commits by
    /// scanning the file for them (`remembered(among:)`); a question about many commits, or any after
    /// `scans` of them (a push of many updates that each bring new commits), from every id parsed once
    /// (`load`). No push scans the file more than `scans` times.
    final class Questions {
        static let scans = 4
        /// Commits a question may ask about and still be answered by a scan.
        static let fewCommits = 1024
        private let memory: VerifiedCommits
        private var asked = 0
        private var all: Set<ObjectID>?

        init(_ memory: VerifiedCommits) {
            self.memory = memory
        }

        /// Those of `ids` that are remembered.
        func remembered(among ids: some Collection<ObjectID>) -> Set<ObjectID> {
            guard !ids.isEmpty else { return [] }
            if all == nil, asked < Self.scans, ids.count <= Self.fewCommits {
                asked += 1
                return memory.remembered(among: ids)
            }
            let known = all ?? memory.load()
            all = known
            return Set(ids.filter { known.contains($0) })
        }
    }

    /// Each line after the header, where it lies in the file read once (no line when there is no
    /// file or it is from other rules); `reserving` first hears about how many lines there are.
    private func forEachLine(reserving: (Int) -> Void = { _ in }, _ body: (UnsafeRawBufferPointer) -> Void) {
        guard let data = try? AtomicFile.read(url, maxBytes: Self.maxFileBytes, what: "verified commits"),
              data.starts(with: Data(Self.header.utf8))
        else { return }
        // Read where the bytes lie: splitting the file into strings cost a hook more than a one-commit
        // push's rules.
        data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            reserving(bytes.count / 41)
            bytes.forEachLine(from: Self.header.utf8.count, body)
        }
    }

    /// Remembers `ids` as verified. Not flushed to disk: a record a crash loses only costs a check
    /// again, and one it leaves torn is no id (`load` and `remembered(among:)` read whole 40-digit
    /// lines only); a push no longer waits for the disk (about a millisecond) before git takes it.
    public func remember(_ ids: [ObjectID]) throws {
        guard !ids.isEmpty else { return }
        try AtomicFile.createDirectory(url.deletingLastPathComponent(), mode: 0o700)
        let handle = try? FileHandle(forReadingFrom: url)
        let start = try? handle?.read(upToCount: Self.header.utf8.count)
        try? handle?.close()
        let lines = Data(ids.map { $0.hex + "\n" }.joined().utf8)
        if start != Data(Self.header.utf8) {
            // A new file, or one from other rules: header and ids in one replacing write.
            try AtomicFile.write(Data(Self.header.utf8) + lines, to: url, mode: 0o644, replacing: true, durable: false)
        } else {
            try AtomicFile.append(lines, to: url, mode: 0o644, durable: false)
        }
    }
}
