/// Where Cohort keeps its files in a collaboration repository.
public enum CohortLayout {
    public static let folder = ".cohort"
    public static let collaboration = ".cohort/collaboration.json"
    public static let members = ".cohort/members.json"
    public static let notices = ".cohort/notices"
    /// The default branch every collaboration starts on.
    public static let defaultBranch = "refs/heads/main"

    /// Whether `path` is inside `.cohort/`.
    public static func isCohortPath(_ path: String) -> Bool {
        path == folder || path.hasPrefix(folder + "/")
    }

    /// Whether a top-level `name` would land on `.cohort` on some file system without being it: case
    /// variants (`.COHORT`), trailing dots or spaces (Windows), characters HFS+ ignores, 8.3 short names.
    public static func isLookAlike(_ name: String) -> Bool {
        guard name != folder else { return false }
        let ignorable: (Unicode.Scalar) -> Bool = {
            (0x200C...0x200F).contains($0.value) || (0x202A...0x202E).contains($0.value)
                || (0x206A...0x206F).contains($0.value) || $0.value == 0xFEFF
        }
        var folded = String(String.UnicodeScalarView(name.unicodeScalars.filter { !ignorable($0) })).lowercased()
        while let last = folded.last, last == "." || last == " " { folded.removeLast() }
        if folded == folder { return true }
        let short = folded.hasPrefix("cohort~") ? folded.dropFirst(7) : ""
        return !short.isEmpty && short.allSatisfy(\.isNumber)
    }

    /// Whether `path` is where a notice may be: `.cohort/notices/xx/<32 hex>.json` with `xx` its first two digits.
    /// Compared as bytes (ASCII digits and `a`–`f` only): it runs for every change under `.cohort/`.
    public static func isNoticePath(_ path: String) -> Bool {
        let prefix = ".cohort/notices/".utf8
        let bytes = Array(path.utf8)
        // ".cohort/notices/" + "xx/" + 32 digits + ".json"
        guard bytes.count == prefix.count + 3 + 32 + 5, bytes.starts(with: prefix), bytes.hasSuffix(".json".utf8) else { return false }
        let folder = bytes[prefix.count..<prefix.count + 2]
        let id = bytes[(prefix.count + 3)..<(prefix.count + 35)]
        return bytes[prefix.count + 2] == UInt8(ascii: "/") && id.allSatisfy(isLowercaseHexDigit) && id.prefix(2).elementsEqual(folder)
    }

    private static func isLowercaseHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }
}

private extension Array where Element == UInt8 {
    func hasSuffix(_ suffix: String.UTF8View) -> Bool {
        count >= suffix.count && self[(count - suffix.count)...].elementsEqual(suffix)
    }
}

/// Editor temp and lock files, never committed: vim swap files, emacs backups and locks, Office and
/// LibreOffice lock files, partial downloads, macOS and Windows litter.
public enum EditorArtifacts {
    public static func matches(_ path: String) -> Bool {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        if name == ".DS_Store" || name == "Thumbs.db" || name == "desktop.ini" || name == "4913" { return true }
        if name.hasSuffix("~") || name.hasSuffix(".swp") || name.hasSuffix(".swo") || name.hasSuffix(".swx") { return true }
        if name.hasSuffix(".tmp") || name.hasSuffix(".crdownload") || name.hasSuffix(".part") { return true }
        if name.hasPrefix(".#") || (name.hasPrefix("#") && name.hasSuffix("#")) { return true }
        if name.hasPrefix("~$") || (name.hasPrefix(".~lock.") && name.hasSuffix("#")) { return true }
        return false
    }
}
