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
        guard let data = try? AtomicFile.read(url, maxBytes: Self.maxFileBytes, what: "verified commits"),
              data.starts(with: Data(Self.header.utf8))
        else { return [] }
        var ids = Set<ObjectID>()
        for line in data.dropFirst(Self.header.utf8.count).split(separator: UInt8(ascii: "\n")) where line.count == 40 {
            if let id = try? ObjectID(hex: String(decoding: line, as: UTF8.self)) { ids.insert(id) }
        }
        return ids
    }

    /// Remembers `ids` as verified.
    public func remember(_ ids: [ObjectID]) throws {
        guard !ids.isEmpty else { return }
        try AtomicFile.createDirectory(url.deletingLastPathComponent(), mode: 0o700)
        let handle = try? FileHandle(forReadingFrom: url)
        let start = try? handle?.read(upToCount: Self.header.utf8.count)
        try? handle?.close()
        let lines = Data(ids.map { $0.hex + "\n" }.joined().utf8)
        if start != Data(Self.header.utf8) {
            // A new file, or one from other rules: header and ids in one replacing write.
            try AtomicFile.write(Data(Self.header.utf8) + lines, to: url, mode: 0o644, replacing: true)
        } else {
            try AtomicFile.append(lines, to: url, mode: 0o644)
        }
    }
}
