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
    public static func isNoticePath(_ path: String) -> Bool {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == ".cohort", parts[1] == "notices", parts[3].hasSuffix(".json") else { return false }
        let id = parts[3].dropLast(5)
        return id.count == 32 && id.allSatisfy { $0.isHexDigit && !$0.isUppercase } && id.prefix(2) == parts[2]
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
