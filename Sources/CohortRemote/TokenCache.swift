import CohortBase
import CohortIdentity
import CohortServerAPI
import Crypto
import Foundation

/// Access tokens this device bought, kept until shortly before they expire so that every git
/// command does not repeat the challenge–response: `$COHORT_HOME/tokens/<hash of the link>.json`,
/// mode 0600, written atomically. A token is a bearer secret for minutes; the server still checks
/// membership on every request, so a cached token of a removed participant opens nothing.
public struct TokenCache: Sendable {
    /// A cached token is used only while it has at least this many seconds left.
    static let margin: TimeInterval = 30

    let directory: URL

    public init(home: IdentityHome) {
        directory = home.directory.appendingPathComponent("tokens", isDirectory: true)
    }

    /// Plain numbers and strings only: git runs the helper for every command, and decoding dates
    /// would load the calendar data on each start.
    private struct Entry: Codable {
        var link: String
        var token: String
        var access: ServerAPI.Access
        var expires: Int64
        var root: String
        var scheme: RootScheme
        /// The server refused this person a push token (they read only).
        var pushRefused: Bool?

        var response: ServerAPI.TokenResponse? {
            guard let root = try? RootHash(scheme: scheme, hex: root) else { return nil }
            return ServerAPI.TokenResponse(token: token, access: access, expiresAt: Date(timeIntervalSince1970: TimeInterval(expires)), root: root)
        }
    }

    private func file(for link: CollaborationLink) -> URL {
        let name = SHA256.hash(data: Data(link.url.utf8)).map { String(format: "%02x", $0) }.joined().prefix(32)
        return directory.appendingPathComponent("\(name).json")
    }

    private func entry(for link: CollaborationLink, now: Date) -> Entry? {
        guard let data = try? AtomicFile.read(file(for: link), maxBytes: 16 << 10, what: "cached token"),
              let entry = try? JSONDecoder().decode(Entry.self, from: data),
              entry.link == link.url, TimeInterval(entry.expires) - now.timeIntervalSince1970 > Self.margin
        else { return nil }
        return entry
    }

    /// A cached token for `link` that allows `access` and is not about to expire.
    public func token(for link: CollaborationLink, access: ServerAPI.Access, now: Date = Date()) -> ServerAPI.TokenResponse? {
        guard let entry = entry(for: link, now: now), entry.access >= access else { return nil }
        return entry.response
    }

    /// The token git's credential helper may answer with (it cannot tell a fetch from a push): a
    /// read-write one, or a read one of a person the server refused a push token.
    public func tokenForGit(_ link: CollaborationLink, now: Date = Date()) -> ServerAPI.TokenResponse? {
        guard let entry = entry(for: link, now: now), entry.access == .readWrite || entry.pushRefused == true else { return nil }
        return entry.response
    }

    /// Keeps `token` for `link` (a failure to write only costs a later exchange); a valid read-write
    /// token is not replaced by a read one.
    public func store(_ token: ServerAPI.TokenResponse, for link: CollaborationLink, pushRefused: Bool = false, now: Date = Date()) {
        if token.access == .read, !pushRefused, self.token(for: link, access: .readWrite, now: now) != nil { return }
        guard (try? AtomicFile.createDirectory(directory, mode: 0o700)) != nil else { return }
        let entry = Entry(link: link.url, token: token.token, access: token.access, expires: Int64(token.expiresAt.timeIntervalSince1970),
                          root: token.root, scheme: token.scheme, pushRefused: pushRefused ? true : nil)
        try? AtomicFile.write(ServerAPI.encode(entry), to: file(for: link), mode: 0o600, replacing: true)
    }

    /// Forgets the token for `link` (git's `erase`, after the server refused it).
    public func remove(for link: CollaborationLink) {
        try? FileManager.default.removeItem(at: file(for: link))
    }
}
