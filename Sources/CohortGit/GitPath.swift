import CGit2
import CohortBase
import Foundation

/// The names git refuses to check out on any platform (its `verify_path` with both `core.protectNTFS`
/// and `core.protectHFS`): a commit that carries one breaks every checkout of it, so the verifier
/// refuses it at the gate. Names are checked one path component at a time, as git stores them.
public enum GitPath {
    /// Longest name accepted for one component, in bytes (Linux and macOS allow 255).
    public static let maxComponentBytes = 255

    /// Deepest nesting of folders accepted, at the gate and by every walk of a tree's files.
    public static let maxDepth = 64

    /// Throws `E_NOT_PERMITTED` naming `path` when the component `name` (the last part of `path`),
    /// with git file mode `mode`, is one git would refuse.
    public static func check(component name: String, mode: UInt32, path: String) throws {
        if let reason = refusal(component: name, mode: mode) {
            throw CohortError(.notPermitted, "the path '\(shown(path))' \(reason)",
                              hint: "rename it: git refuses to check such a path out on some systems")
        }
    }

    /// Whether git would check out `path` (slash-separated), its last part with mode `mode`, on every
    /// platform: each component passes `refusal(component:mode:)`. Plain components are checked on
    /// their bytes where they lie; only the others are made into names of their own.
    public static func isValid(path: String, mode: UInt32 = 0o100644) -> Bool {
        var path = path
        return path.withUTF8 { bytes in
            var start = 0
            while true {
                let end = bytes[start...].firstIndex(of: UInt8(ascii: "/")) ?? bytes.count
                let component = UnsafeBufferPointer(rebasing: bytes[start..<end])
                let last = end == bytes.count
                if !isPlain(component),
                   refusal(component: String(decoding: component, as: UTF8.self), mode: last ? mode : 0o040000) != nil { return false }
                if last { return true }
                start = end + 1
            }
        }
    }

    /// Most names are plain ASCII that starts with neither '.' nor 'g' nor 'm': none of git's special
    /// spellings can match them, so only the simple checks apply, and those pass.
    static func isPlain(_ name: some Collection<UInt8>) -> Bool {
        guard let first = name.first, first != UInt8(ascii: "."), first | 0x20 != UInt8(ascii: "g"), first | 0x20 != UInt8(ascii: "m"),
              name.count <= maxComponentBytes else { return false }
        return name.allSatisfy { $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\\") && $0 != UInt8(ascii: "/") }
    }

    /// Why git refuses the component `name` with mode `mode`, or nil when it is a valid name.
    public static func refusal(component name: String, mode: UInt32) -> String? {
        if isPlain(name.utf8) { return nil }
        let bytes = Array(name.utf8)
        if bytes.isEmpty { return "has an empty component" }
        if bytes.count > maxComponentBytes { return "has a component longer than \(maxComponentBytes) bytes" }
        if name == "." || name == ".." { return "has a '\(name)' component" }
        if bytes.contains(0) { return "contains a NUL byte" }
        if bytes.contains(UInt8(ascii: "/")) { return "has a component that contains '/'" }
        if bytes.contains(UInt8(ascii: "\\")) { return "contains a backslash (a folder separator on Windows)" }
        if isNTFSDotGit(bytes) { return "names .git on Windows (NTFS)" }
        if isHFSDotGit(name) { return "names .git on macOS (HFS+)" }
        if mode == 0o120000, isGitControlFile(name) { return "is a symbolic link in place of a git control file" }
        return nil
    }

    /// `.git` or its 8.3 short name `git~1`, any case, followed only by dots and spaces (which Windows
    /// strips) or by `:` (an alternate data stream).
    static func isNTFSDotGit(_ bytes: [UInt8]) -> Bool {
        let lower = bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }
        let rest: ArraySlice<UInt8>
        if lower.starts(with: Array(".git".utf8)) {
            rest = lower.dropFirst(4)
        } else if lower.starts(with: Array("git~1".utf8)) {
            rest = lower.dropFirst(5)
        } else {
            return false
        }
        for byte in rest {
            if byte == UInt8(ascii: ":") { return true }
            if byte != UInt8(ascii: ".") && byte != UInt8(ascii: " ") { return false }
        }
        return true
    }

    /// `.git` once HFS+ has dropped the code points it ignores and folded case.
    static func isHFSDotGit(_ name: String) -> Bool {
        hfsFolded(name) == ".git"
    }

    /// A link named like `.gitmodules`, `.gitattributes`, `.gitignore` or `.mailmap` in any spelling the
    /// file systems above accept: git refuses those as links because it reads them through the tree.
    static func isGitControlFile(_ name: String) -> Bool {
        let folded = hfsFolded(name)
        let bytes = Array(name.utf8)
        for (file, shortPrefix) in controlFiles {
            if folded == "." + file || isNTFSDotGeneric(bytes, name: Array(file.utf8), shortPrefix: Array(shortPrefix.utf8)) { return true }
        }
        return false
    }

    /// The control files and the prefixes of their fall-back NTFS short names (git's `is_ntfs_dot*`).
    static let controlFiles = [("gitmodules", "gi7eba"), ("gitattributes", "gi7d29"), ("gitignore", "gi250a"), ("mailmap", "maba30")]

    /// git's `is_ntfs_dot_generic`: `.NAME`, its 8.3 short name (`NAME` cut to 6, `~1` to `~4`) or its
    /// fall-back short name (`PREFIX~N`), any case, followed only by spaces and dots, or by `:`.
    static func isNTFSDotGeneric(_ name: [UInt8], name file: [UInt8], shortPrefix: [UInt8]) -> Bool {
        func lower(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte }
        func at(_ index: Int) -> UInt8 { index < name.count ? name[index] : 0 }
        func onlySpacesAndPeriods(from start: Int) -> Bool {
            var index = start
            while true {
                let byte = at(index)
                index += 1
                if byte == 0 || byte == UInt8(ascii: ":") { return true }
                if byte != UInt8(ascii: " ") && byte != UInt8(ascii: ".") { return false }
            }
        }
        if at(0) == UInt8(ascii: "."), name.count > file.count, (0..<file.count).allSatisfy({ lower(name[$0 + 1]) == file[$0] }) {
            return onlySpacesAndPeriods(from: file.count + 1)
        }
        if name.count >= 8, (0..<6).allSatisfy({ lower(name[$0]) == file[$0] }), name[6] == UInt8(ascii: "~"),
           (UInt8(ascii: "1")...UInt8(ascii: "4")).contains(name[7]) {
            return onlySpacesAndPeriods(from: 8)
        }
        var index = 0
        var sawTilde = false
        while index < 8 {
            let byte = at(index)
            if byte == 0 { return false }
            if sawTilde {
                if !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { return false }
            } else if byte == UInt8(ascii: "~") {
                index += 1
                if !(UInt8(ascii: "1")...UInt8(ascii: "9")).contains(at(index)) { return false }
                sawTilde = true
            } else if index >= 6 || lower(byte) != shortPrefix[index] {
                return false
            }
            index += 1
        }
        return onlySpacesAndPeriods(from: 8)
    }

    /// `name` without the code points HFS+ ignores, ASCII letters lowercased.
    static func hfsFolded(_ name: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in name.unicodeScalars where !isHFSIgnorable(scalar) {
            if scalar.value >= 0x41, scalar.value <= 0x5A, let lower = Unicode.Scalar(scalar.value + 0x20) {
                scalars.append(lower)
            } else {
                scalars.append(scalar)
            }
        }
        return String(scalars)
    }

    /// The code points HFS+ drops when it compares names (git's `next_hfs_char`).
    public static func isHFSIgnorable(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x200C...0x200F, 0x202A...0x202E, 0x206A...0x206F, 0xFEFF: true
        default: false
        }
    }

    /// A path as it may be shown in one line: control characters (C0, DEL, C1) and the marks that
    /// reorder or hide text (bidirectional controls) escaped, bounded.
    static func shown(_ path: String) -> String {
        var text = ""
        for scalar in path.unicodeScalars.prefix(200) {
            switch scalar.value {
            case 0..<0x20, 0x7F: text += String(format: "\\x%02x", scalar.value)
            case 0x80...0x9F, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: text += String(format: "\\u{%04x}", scalar.value)
            default: text.unicodeScalars.append(scalar)
            }
        }
        return text
    }
}

extension Repository {
    /// Checks the name of every entry of tree `new` that tree `old` (nil: none) does not hold with the
    /// same id and mode, descending only into subtrees that changed, against `GitPath`. Paths in the
    /// errors are relative to the trees. Entries that did not change were checked when they came in.
    /// A top-level folder named `skipping` is not descended into (its name is checked): for a folder
    /// whose every path another rule already pins down.
    /// `prefix` is the path of the trees (with a final `/`) for the errors.
    /// With `memo`, trees stay parsed between calls (one memo per thread).
    public func checkNewPaths(from old: ObjectID?, to new: ObjectID, prefix: String = "", skipping: String? = nil, maxDepth: Int = GitPath.maxDepth,
                              memo: TreeMemo? = nil) throws {
        try checkNewPaths(from: old, to: new, prefix: prefix, depth: prefix.split(separator: "/").count + 1, maxDepth: maxDepth,
                          skipping: skipping, memo: memo)
    }

    private func checkNewPaths(from old: ObjectID?, to new: ObjectID, prefix: String, depth: Int, maxDepth: Int, skipping: String? = nil,
                               memo: TreeMemo?) throws {
        guard old != new else { return }
        guard depth <= maxDepth else {
            throw CohortError(.tooLarge, "folders are nested deeper than \(maxDepth) levels at \(GitPath.shown(prefix))")
        }
        var subtrees: [(ObjectID?, ObjectID, String)] = []
        try withTree(old, memo: memo) { oldTree in
            try withTree(new, memo: memo) { newTree in
                for pair in try Self.differences(oldTree, newTree, prefix: prefix) where pair.new_index >= 0 {
                    guard let after = newTree?[Int(pair.new_index)] else { break }
                    var previous: ObjectID?
                    if pair.old_index >= 0, let before = oldTree?[Int(pair.old_index)], before.type == GIT_OBJECT_TREE {
                        previous = before.id
                    }
                    let name = after.name
                    let path = prefix + name
                    try GitPath.check(component: name, mode: after.filemode, path: path)
                    if after.type == GIT_OBJECT_TREE, name != skipping {
                        subtrees.append((previous, after.id, path + "/"))
                    }
                }
            }
        }
        for (old, new, path) in subtrees {
            try checkNewPaths(from: old, to: new, prefix: path, depth: depth + 1, maxDepth: maxDepth, memo: memo)
        }
    }
}
