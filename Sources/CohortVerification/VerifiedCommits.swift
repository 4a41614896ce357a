import CohortGit
import CohortIdentity
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Commits already verified in a repository, remembered in `<git dir>/cohort/verified` (one id per
/// line, appended), so `cohort verify` only checks what is new. Losing the file only costs time.
public struct VerifiedCommits {
    static let maxFileBytes = 256 << 20
    public let url: URL

    public init(repository: Repository) {
        url = repository.gitDirectory.appendingPathComponent("cohort/verified")
    }

    /// The remembered ids; unreadable lines are skipped.
    public func load() -> Set<ObjectID> {
        guard let data = try? AtomicFile.read(url, maxBytes: Self.maxFileBytes, what: "verified commits") else { return [] }
        var ids = Set<ObjectID>()
        for line in data.split(separator: UInt8(ascii: "\n")) where line.count == 40 {
            if let id = try? ObjectID(hex: String(decoding: line, as: UTF8.self)) { ids.insert(id) }
        }
        return ids
    }

    /// Remembers `ids` as verified.
    public func remember(_ ids: [ObjectID]) throws {
        guard !ids.isEmpty else { return }
        try AtomicFile.createDirectory(url.deletingLastPathComponent(), mode: 0o700)
        let fd = open(url.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw CohortError(.io, "cannot write \(url.path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let text = Array(ids.map { $0.hex + "\n" }.joined().utf8)
        let written = text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == text.count else { throw CohortError(.io, "cannot write \(url.path): \(String(cString: strerror(errno)))") }
    }
}
