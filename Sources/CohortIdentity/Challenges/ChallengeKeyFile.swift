import CohortBase
import Crypto
import Foundation

/// A server's challenge key on disk: 32 random bytes as hex, mode 0600, created once and then reused,
/// so challenges issued before a restart still verify after it.
public enum ChallengeKeyFile {
    /// Loads the key at `url`, creating it if there is none. Two processes starting at once end up
    /// with the same key: the second creation fails and reads the first one's file.
    public static func loadOrCreate(at url: URL) throws -> SymmetricKey {
        if let key = try load(url) { return key }
        let key = SymmetricKey(size: .bits256)
        let hex = key.withUnsafeBytes { Data($0) }.hexString + "\n"
        do {
            try AtomicFile.write(Data(hex.utf8), to: url, mode: 0o600, replacing: false)
            return key
        } catch {
            guard let existing = try load(url) else { throw error }
            return existing
        }
    }

    private static func load(_ url: URL) throws -> SymmetricKey? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        let text = try AtomicFile.read(url, maxBytes: 256, what: "challenge key")
        guard let bytes = Data(hex: String(decoding: text, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)),
              bytes.count >= 32
        else {
            throw CohortError(.malformed, "the challenge key at \(url.path) is not at least 32 bytes of hex",
                              hint: "remove it to have a new one made (challenges in flight will then be refused)")
        }
        return SymmetricKey(data: bytes)
    }
}
