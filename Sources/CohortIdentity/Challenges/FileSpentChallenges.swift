import CohortBase
import Foundation
import Synchronization

/// Spent nonces in an append-only file (`HEXNONCE EXPIRY` per line, fsynced before a spend counts),
/// reloaded on start so that a challenge spent before a restart stays spent after it. One process
/// owns the file; instances on several machines need a shared store implementing the protocol.
public final class FileSpentChallenges: SpentChallengeStore {
    /// Largest log read at start.
    static let maxFileBytes = 64 << 20

    private struct State {
        var table: [Data: UInt64]
        var lines: Int
        var pruneAt: Int
    }

    private let url: URL
    private let state: Mutex<State>

    /// Opens (or creates) the log at `url`, dropping entries that expired before `now`. A torn last
    /// line (a crash during an append) is cut off: that spend never counted.
    public init(url: URL, now: UInt64 = UInt64(Date().timeIntervalSince1970)) throws {
        self.url = url
        var table: [Data: UInt64] = [:]
        var lines = 0
        for line in try AtomicFile.readLines(url, maxBytes: Self.maxFileBytes, what: "spent-challenge log", repair: true) {
            lines += 1
            let fields = line.split(separator: UInt8(ascii: " "))
            guard fields.count == 2, let nonce = Data(hex: String(decoding: fields[0], as: UTF8.self)), nonce.count == 32,
                  let expiry = UInt64(String(decoding: fields[1], as: UTF8.self))
            else { continue }
            if expiry >= now { table[nonce] = expiry }
        }
        state = Mutex(State(table: table, lines: lines, pruneAt: max(1024, 2 * table.count)))
        try compactIfMostlyExpired(now: now)
    }

    public var isDurable: Bool { true }

    public func contains(_ nonce: Data) -> Bool {
        state.withLock { $0.table[nonce] != nil }
    }

    public func spend(_ nonce: Data, expiresAt: UInt64, now: UInt64) throws -> Bool {
        let spent = try state.withLock { state in
            guard state.table[nonce] == nil else { return false }
            try AtomicFile.append(Data("\(nonce.hexString) \(expiresAt)\n".utf8), to: url)
            state.table[nonce] = expiresAt
            state.lines += 1
            return true
        }
        if spent { try compactIfMostlyExpired(now: now) }
        return spent
    }

    /// Every so often (amortised O(1) per spend): forget expired nonces, and rewrite the log
    /// atomically when most of its lines are dead.
    private func compactIfMostlyExpired(now: UInt64) throws {
        try state.withLock { state in
            guard state.lines >= state.pruneAt else { return }
            state.table = state.table.filter { $0.value >= now }
            if state.lines > 2 * state.table.count {
                let text = state.table.map { "\($0.key.hexString) \($0.value)\n" }.joined()
                try AtomicFile.write(Data(text.utf8), to: url, mode: 0o600, replacing: true)
                state.lines = state.table.count
            }
            state.pruneAt = max(1024, 2 * state.lines)
        }
    }
}
