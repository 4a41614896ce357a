import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Spent nonces in an append-only file (`HEXNONCE EXPIRY` per line, fsynced before a spend counts),
/// reloaded on start so a challenge spent before a restart stays spent after it.
public final class FileSpentChallenges: SpentChallengeStore {
    /// Largest log read at start.
    static let maxFileBytes = 64 << 20

    private struct State {
        var table: [Data: UInt64]
        var lines: Int
    }

    private let url: URL
    private let state: Mutex<State>

    /// Opens (or creates) the log at `url`, dropping entries that expired before `now`.
    public init(url: URL, now: UInt64 = UInt64(Date().timeIntervalSince1970)) throws {
        self.url = url
        var table: [Data: UInt64] = [:]
        var lines = 0
        if FileManager.default.fileExists(atPath: url.path) {
            let data = try AtomicFile.read(url, maxBytes: Self.maxFileBytes, what: "spent-challenge log")
            for line in data.split(separator: UInt8(ascii: "\n")) {
                lines += 1
                // A torn last line (crash mid-append) is skipped; its spend never counted.
                let fields = line.split(separator: UInt8(ascii: " "))
                guard fields.count == 2, let nonce = Data(hex: String(decoding: fields[0], as: UTF8.self)), nonce.count == 32,
                      let expiry = UInt64(String(decoding: fields[1], as: UTF8.self))
                else { continue }
                if expiry >= now { table[nonce] = expiry }
            }
        }
        state = Mutex(State(table: table, lines: lines))
    }

    public func contains(_ nonce: Data) -> Bool {
        state.withLock { $0.table[nonce] != nil }
    }

    public func spend(_ nonce: Data, expiresAt: UInt64, now: UInt64) throws -> Bool {
        try state.withLock { state in
            guard state.table[nonce] == nil else { return false }
            try append("\(nonce.hexString) \(expiresAt)\n")
            state.table[nonce] = expiresAt
            state.lines += 1
            if state.lines > 1024, state.lines > 2 * state.table.count {
                try compact(&state, now: now)
            }
            return true
        }
    }

    private func append(_ line: String) throws {
        let fd = open(url.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw CohortError(.io, "cannot open spent-challenge log \(url.path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        let bytes = Array(line.utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count, fsync(fd) == 0 else {
            throw CohortError(.io, "cannot record a spent challenge in \(url.path): \(String(cString: strerror(errno)))")
        }
    }

    /// Rewrites the log with only the live entries (atomically: a crash leaves the old or the new log).
    private func compact(_ state: inout State, now: UInt64) throws {
        state.table = state.table.filter { $0.value >= now }
        let text = state.table.map { "\($0.key.hexString) \($0.value)\n" }.joined()
        try AtomicFile.write(Data(text.utf8), to: url, mode: 0o600, replacing: true)
        state.lines = state.table.count
    }
}
