import CGit2
import CGit2Shim
import CohortBase
import Foundation
import Synchronization

extension Repository {
    /// Writes HEAD's files and index into a working folder that holds nothing else yet (a clone made
    /// without a checkout). Files are written on `workers` threads, each reading objects through a
    /// handle of its own, and every file, link and folder is created afresh: something found already
    /// in a file's place fails the checkout rather than being overwritten or followed. Where libgit2
    /// would pass a file's content through a filter (any attributes file, `core.autocrlf`), write a
    /// link as a file (`core.symlinks` false) or a submodule, libgit2's own checkout writes the folder.
    public func checkoutHeadIntoEmptyFolder(workers: Int = ProcessInfo.processInfo.activeProcessorCount) throws {
        try flushObjects()
        guard let directory = workingDirectory, let head = try resolve("HEAD") else { return try checkoutHeadWithLibgit2() }
        let tree = try tree(ofCommit: head)
        let entries = try blobEntries(ofTree: tree)
        guard try writesEveryFileAsStored(entries) else { return try checkoutHeadWithLibgit2() }
        for entry in entries where !GitPath.isValid(path: entry.path, mode: entry.mode) {
            throw CohortError(.notPermitted, "the path '\(GitPath.shown(entry.path))' cannot be written in a working folder",
                              hint: "nothing was checked out; tell the collaboration's owner")
        }
        let root = directory.path.hasSuffix("/") ? String(directory.path.dropLast()) : directory.path
        try createFolders(of: entries, under: root)
        let written = try FolderWriter(root: root, entries: entries, origin: origin, workers: max(1, min(workers, 8))).run()
        try writeIndex(of: tree, entries: entries, written: written)
    }

    /// libgit2's checkout of HEAD, every file forced (the folder is empty).
    private func checkoutHeadWithLibgit2() throws {
        var options = git_checkout_options()
        try check(git_checkout_options_init(&options, UInt32(GIT_CHECKOUT_OPTIONS_VERSION)), "checkout options")
        options.checkout_strategy = GIT_CHECKOUT_FORCE.rawValue
        try check(git_checkout_head(pointer, &options), "cannot write the files of HEAD")
    }

    /// Whether libgit2 would write every entry's content exactly as stored: plain files and links only
    /// (links as links), and no attributes anywhere that could ask for a filter (libgit2 reads them from
    /// the tree's `.gitattributes`, `info/attributes`, `core.attributesFile`, and the system's and the
    /// user's attributes files), nor `core.autocrlf` or `core.eol` asking for line endings of their own.
    private func writesEveryFileAsStored(_ entries: [IndexEntry]) throws -> Bool {
        guard entries.allSatisfy({ [0o100644, 0o100755, 0o120000].contains($0.mode) }) else { return false }
        if entries.contains(where: { $0.mode == 0o120000 }), try configBool("core.symlinks") == false { return false }
        guard !entries.contains(where: { Self.isAttributesFile($0.path) }), try configString("core.attributesFile") == nil else { return false }
        if let autocrlf = try configString("core.autocrlf"), !["false", "input", "no", "off", "0"].contains(autocrlf.lowercased()) { return false }
        if let eol = try configString("core.eol"), eol.lowercased() != "lf", eol.lowercased() != "native" { return false }
        var candidates = [gitDirectory.appendingPathComponent("info/attributes").path]
        candidates += Self.searchPath(GIT_CONFIG_LEVEL_SYSTEM).map { $0 + "/gitattributes" }
        candidates += Self.searchPath(GIT_CONFIG_LEVEL_XDG).map { $0 + "/attributes" }
        return !candidates.contains { FileManager.default.fileExists(atPath: $0) }
    }

    /// Whether the last part of `path` is `.gitattributes`, in any case.
    private static func isAttributesFile(_ path: String) -> Bool {
        let name = ".gitattributes".utf8
        let bytes = path.utf8
        guard bytes.count >= name.count else { return false }
        let tail = bytes.suffix(name.count)
        guard tail.startIndex == bytes.startIndex || bytes[bytes.index(before: tail.startIndex)] == UInt8(ascii: "/") else { return false }
        return zip(tail, name).allSatisfy { $0 | 0x20 == $1 | 0x20 }
    }

    /// The folders libgit2 searches for configuration at `level` (where it also looks for the
    /// system's and the user's attributes files).
    private static func searchPath(_ level: git_config_level_t) -> [String] {
        var buffer = git_buf()
        defer { git_buf_dispose(&buffer) }
        guard cohort_git_search_path(level, &buffer) == 0, let text = buffer.ptr else { return [] }
        return String(cString: text).split(separator: ":").map(String.init)
    }

    /// Creates every folder the entries need, parents first, as libgit2 makes them (0755 before the
    /// umask); one found in the way must be a real folder (never a link).
    private func createFolders(of entries: [IndexEntry], under root: String) throws {
        var made: Set<Substring> = []
        var previous: Substring = ""
        for entry in entries {
            guard let slash = entry.path.utf8.lastIndex(of: UInt8(ascii: "/")) else { continue }
            let folder = entry.path[..<slash]
            // Entries come folder by folder: most share the last one's.
            guard folder != previous else { continue }
            previous = folder
            guard !made.contains(folder) else { continue }
            var missing: [Substring] = []
            var next: Substring? = folder
            while let current = next, !made.contains(current) {
                missing.append(current)
                next = current.lastIndex(of: "/").map { current[..<$0] }
            }
            for path in missing.reversed() {
                let full = root + "/" + path
                if mkdir(full, 0o755) != 0 {
                    let error = errno
                    var info = stat()
                    guard error == EEXIST, lstat(full, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
                        throw CohortError(.io, "cannot create the folder \(path): \(String(cString: strerror(error)))",
                                          hint: "clone into a new, empty folder")
                    }
                }
                made.insert(path)
            }
        }
    }

    /// Writes the index of `tree`, each entry with its file's stat data as written, so that the next
    /// look at the folder need not read the files again.
    private func writeIndex(of tree: ObjectID, entries: [IndexEntry], written: [stat]) throws {
        var index: OpaquePointer?
        try check(git_repository_index(&index, pointer), "cannot open the index")
        defer { git_index_free(index) }
        try withTree(tree) { try check(git_index_read_tree(index, $0), "cannot read the files of HEAD into the index") }
        for (position, (entry, info)) in zip(entries, written).enumerated() {
            // The index lists a tree's paths in the order its walk finds them (git's order); any other
            // order (`core.ignoreCase`) is looked up by path.
            var found = git_index_get_byindex(index, position)
            if found.map({ strcmp($0.pointee.path, entry.path) != 0 }) ?? true { found = git_index_get_bypath(index, entry.path, 0) }
            guard let found, ObjectID(found.pointee.id) == entry.id else {
                throw CohortError(.git, "the index does not hold \(GitPath.shown(entry.path)) as HEAD does", hint: "clone again")
            }
            // libgit2 has no call that gives an entry its stat data short of validating and inserting
            // it again (2.8 µs an entry, a fifth of a checkout); its own checkout sets these same
            // fields on its entries, so they are set where `read_tree` left them.
            let stamped = UnsafeMutablePointer(mutating: found)
            stamped.pointee.ctime = git_index_time(seconds: Int32(truncatingIfNeeded: info.st_ctim.tv_sec), nanoseconds: UInt32(truncatingIfNeeded: info.st_ctim.tv_nsec))
            stamped.pointee.mtime = git_index_time(seconds: Int32(truncatingIfNeeded: info.st_mtim.tv_sec), nanoseconds: UInt32(truncatingIfNeeded: info.st_mtim.tv_nsec))
            stamped.pointee.dev = UInt32(truncatingIfNeeded: info.st_dev)
            stamped.pointee.ino = UInt32(truncatingIfNeeded: info.st_ino)
            stamped.pointee.uid = info.st_uid
            stamped.pointee.gid = info.st_gid
            stamped.pointee.file_size = UInt32(truncatingIfNeeded: info.st_size)
        }
        try writeIndex(index)
    }
}

/// Writes the files and links of a checkout on several threads, each with a repository handle of its
/// own; every path is created exclusively (`O_EXCL`, never following a link), under folders already made.
private final class FolderWriter: @unchecked Sendable {
    private let root: String
    private let entries: [IndexEntry]
    private let handles: [Repository]
    /// One slot per entry, each filled by the one thread that wrote it.
    private let written: UnsafeMutableBufferPointer<stat>
    private let nextChunk = Atomic<Int>(0)
    private let failure = Mutex<(any Error)?>(nil)
    /// Entries a thread takes at once: mostly one folder's, so that two threads seldom wait on one
    /// folder's lock to create their files.
    private static let chunk = 128

    init(root: String, entries: [IndexEntry], origin: Repository.Origin, workers: Int) throws {
        self.root = root
        self.entries = entries
        let count = entries.isEmpty ? 1 : min(workers, (entries.count + Self.chunk - 1) / Self.chunk)
        handles = try (0..<count).map { _ in try Repository.reopen(origin, ownPacks: true) }
        written = .allocate(capacity: entries.count)
        written.initialize(repeating: stat())
    }

    deinit {
        written.deallocate()
    }

    /// Writes every entry; the stat data of each, in the entries' order.
    func run() throws -> [stat] {
        DispatchQueue.concurrentPerform(iterations: handles.count) { worker in
            let repository = handles[worker]
            while failure.withLock({ $0 == nil }) {
                let start = nextChunk.add(Self.chunk, ordering: .relaxed).oldValue
                guard start < entries.count else { return }
                do {
                    for index in start..<min(start + Self.chunk, entries.count) {
                        written[index] = try write(entries[index], from: repository)
                    }
                } catch {
                    failure.withLock { if $0 == nil { $0 = error } }
                }
            }
        }
        if let error = failure.withLock({ $0 }) { throw error }
        return Array(written)
    }

    private func write(_ entry: IndexEntry, from repository: Repository) throws -> stat {
        let path = root + "/" + entry.path
        return try repository.withBlobContent(entry.id) { bytes in
            var info = stat()
            if entry.mode == 0o120000 {
                // The target's bytes as stored, whatever their encoding; a NUL would cut it short.
                guard !bytes.contains(0) else { throw failure(entry, EINVAL) }
                let target = [UInt8](bytes) + [0]
                let made = target.withUnsafeBytes { symlink($0.baseAddress!.assumingMemoryBound(to: CChar.self), path) }
                guard made == 0, lstat(path, &info) == 0 else { throw failure(entry, errno) }
                return info
            }
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, entry.mode == 0o100755 ? 0o755 : 0o644)
            guard descriptor >= 0 else { throw failure(entry, errno) }
            defer { close(descriptor) }
            var offset = 0
            while offset < bytes.count {
                let count = Foundation.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { throw failure(entry, errno) }
                offset += count
            }
            guard fstat(descriptor, &info) == 0 else { throw failure(entry, errno) }
            return info
        }
    }

    private func failure(_ entry: IndexEntry, _ error: Int32) -> CohortError {
        CohortError(.io, "cannot write \(GitPath.shown(entry.path)): \(String(cString: strerror(error)))",
                    hint: error == EEXIST ? "something else was put in the folder meanwhile; clone into a new, empty folder" : "check the disk, then clone again")
    }
}
