import CGit2
import CGit2Shim
import CohortBase
import Foundation
import Synchronization

extension Repository {
    /// Writes HEAD's files and index into a working folder that holds nothing else yet (a clone made
    /// without a checkout). Files are written on `workers` threads, each reading objects through a
    /// handle of its own. Every folder, file and link is created afresh by name inside a folder
    /// opened without following links (`openat`, `O_NOFOLLOW`, `O_EXCL`): something found in a file's
    /// or folder's place fails the checkout, and is neither overwritten nor followed. Trees that only
    /// libgit2's checkout writes as git does (see `CheckoutPlan`), and folders where libgit2 would
    /// filter a file's content (any attributes file, `core.autocrlf`, `core.eol`), write links as files
    /// (`core.symlinks`) or fold names (`core.ignoreCase`, `core.precomposeUnicode`), are written by
    /// libgit2's checkout as before.
    /// Returns who wrote the files.
    @discardableResult
    public func checkoutHeadIntoEmptyFolder(workers: Int = ProcessInfo.processInfo.activeProcessorCount) throws -> CheckoutWriter {
        try flushObjects()
        guard let directory = workingDirectory, let head = try resolve("HEAD") else { return try checkoutHeadWithLibgit2() }
        let tree = try tree(ofCommit: head)
        let plan = try CheckoutPlan(self, tree: tree)
        guard plan.forLibgit2 == nil, try writesEveryFileAsStored(plan) else { return try checkoutHeadWithLibgit2() }
        let top = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard top >= 0 else {
            throw CohortError(.io, "cannot open \(directory.path): \(String(cString: strerror(errno)))", hint: "check the folder, then clone again")
        }
        defer { close(top) }
        try createFolders(of: plan, in: top)
        let written = try FolderWriter(top: top, plan: plan, origin: origin, workers: max(1, min(workers, 8))).run()
        try writeIndex(of: tree, plan: plan, written: written)
        return .cohort
    }

    /// Who wrote a checkout's files.
    public enum CheckoutWriter: Sendable {
        case cohort
        case libgit2
    }

    /// libgit2's checkout of HEAD: every file written where nothing is (the index is empty, so HEAD's
    /// files count as missing), nothing already there replaced.
    private func checkoutHeadWithLibgit2() throws -> CheckoutWriter {
        var options = git_checkout_options()
        try check(git_checkout_options_init(&options, UInt32(GIT_CHECKOUT_OPTIONS_VERSION)), "checkout options")
        options.checkout_strategy = GIT_CHECKOUT_SAFE.rawValue | GIT_CHECKOUT_RECREATE_MISSING.rawValue
        try check(git_checkout_head(pointer, &options), "cannot write the files of HEAD")
        return .libgit2
    }

    /// Whether libgit2 would write every file's content exactly as stored and every name as it is: no
    /// attributes anywhere that could ask for a filter (libgit2 reads them from `info/attributes`,
    /// `core.attributesFile` and the system's and the user's attributes files, besides the tree's own,
    /// which give no plan), no `core.autocrlf` or `core.eol` asking for line endings of their own, links
    /// written as links, and names not folded.
    private func writesEveryFileAsStored(_ plan: CheckoutPlan) throws -> Bool {
        if plan.hasLinks, try configBool("core.symlinks") == false { return false }
        if try configBool("core.ignoreCase") == true || configBool("core.precomposeUnicode") == true { return false }
        guard try configString("core.attributesFile") == nil else { return false }
        if let autocrlf = try configString("core.autocrlf"), !["false", "input", "no", "off", "0"].contains(autocrlf.lowercased()) { return false }
        if let eol = try configString("core.eol"), eol.lowercased() != "lf", eol.lowercased() != "native" { return false }
        var candidates = [gitDirectory.appendingPathComponent("info/attributes").path]
        candidates += Self.searchPath(GIT_CONFIG_LEVEL_SYSTEM).map { $0 + "/gitattributes" }
        candidates += Self.searchPath(GIT_CONFIG_LEVEL_XDG).map { $0 + "/attributes" }
        return !candidates.contains { FileManager.default.fileExists(atPath: $0) }
    }

    /// The folders libgit2 searches for configuration at `level` (where it also looks for the
    /// system's and the user's attributes files).
    private static func searchPath(_ level: git_config_level_t) -> [String] {
        var buffer = git_buf()
        defer { git_buf_dispose(&buffer) }
        guard cohort_git_search_path(level, &buffer) == 0, let text = buffer.ptr else { return [] }
        return String(cString: text).split(separator: ":").map(String.init)
    }

    /// Creates the plan's folders that hold files, parents first, as libgit2 makes them (0755 before
    /// the umask), each inside its parent opened without following a link. Each must be new: one
    /// already there was put there by someone else (or is `.git`), and is not written into.
    private func createFolders(of plan: CheckoutPlan, in top: Int32) throws {
        // The open folders from the top down to the last one made (the plan lists them depth first).
        var open: [Int32] = [top]
        defer { for descriptor in open.dropFirst() { close(descriptor) } }
        for (index, folder) in plan.folders.enumerated().dropFirst() where folder.holdsFiles {
            while open.count > folder.depth { close(open.removeLast()) }
            let parent = open[open.count - 1]
            let made = withCName(folder.name) { mkdirat(parent, $0, 0o755) }
            guard made.result == 0 else { throw FolderWriter.failure(plan, folder: index, made.error) }
            let opened = FolderWriter.openFolder(folder.name, in: parent)
            guard opened.result >= 0 else { throw FolderWriter.failure(plan, folder: index, opened.error) }
            open.append(opened.result)
        }
    }

    /// Writes the index of `tree`, each entry with its file's stat data as written, so that the next
    /// look at the folder need not read the files again.
    private func writeIndex(of tree: ObjectID, plan: CheckoutPlan, written: [stat]) throws {
        var index: OpaquePointer?
        try check(git_repository_index(&index, pointer), "cannot open the index")
        defer { git_index_free(index) }
        try withTree(tree) { try check(git_index_read_tree(index, $0), "cannot read the files of HEAD into the index") }
        for (position, (file, info)) in zip(plan.files, written).enumerated() {
            let path = file.path + [0]
            let found = path.withUnsafeBytes { bytes -> UnsafePointer<git_index_entry>? in
                let name = bytes.baseAddress!.assumingMemoryBound(to: CChar.self)
                // The index lists a tree's paths in the order of the plan's walk (git's order).
                if let entry = git_index_get_byindex(index, position), strcmp(entry.pointee.path, name) == 0 { return entry }
                return git_index_get_bypath(index, name, 0)
            }
            guard let found, ObjectID(found.pointee.id) == file.id else {
                throw CohortError(.git, "the index does not hold \(CheckoutPlan.shown(file.path)) as HEAD does", hint: "clone again")
            }
            // libgit2 has no call that gives an entry its stat data short of validating and inserting
            // it again (2.8 µs an entry, a fifth of a checkout); its own checkout sets these same
            // fields on its entries, so they are set where `read_tree` left them.
            let stamped = UnsafeMutablePointer(mutating: found)
            stamped.pointee.ctime = git_index_time(seconds: Int32(truncatingIfNeeded: info.st_ctim.tv_sec), nanoseconds: UInt32(truncatingIfNeeded: info.st_ctim.tv_nsec))
            stamped.pointee.mtime = git_index_time(seconds: Int32(truncatingIfNeeded: info.st_mtim.tv_sec), nanoseconds: UInt32(truncatingIfNeeded: info.st_mtim.tv_nsec))
            stamped.pointee.dev = UInt32(truncatingIfNeeded: info.st_dev)
            stamped.pointee.ino = UInt32(truncatingIfNeeded: info.st_ino)
            stamped.pointee.mode = file.mode
            stamped.pointee.uid = info.st_uid
            stamped.pointee.gid = info.st_gid
            stamped.pointee.file_size = UInt32(truncatingIfNeeded: info.st_size)
        }
        try writeIndex(index)
    }
}

/// Calls `body` (a system call) with `name`'s bytes as a C string; its result, and `errno` as it was
/// right after it.
private func withCName(_ name: [UInt8], _ body: (UnsafePointer<CChar>) -> Int32) -> (result: Int32, error: Int32) {
    (name + [0]).withUnsafeBytes { bytes in
        let result = body(bytes.baseAddress!.assumingMemoryBound(to: CChar.self))
        return (result, errno)
    }
}

/// Writes the files and links of a checkout plan on several threads, each with a repository handle
/// of its own. Each thread opens the folder it writes in by name from the top, never following a
/// link, and creates every file and link in it exclusively.
private final class FolderWriter: @unchecked Sendable {
    private let top: Int32
    private let plan: CheckoutPlan
    private let handles: [Repository]
    /// One slot per file, each filled by the one thread that wrote it.
    private let written: UnsafeMutableBufferPointer<stat>
    private let nextChunk = Atomic<Int>(0)
    private let failure = Mutex<(any Error)?>(nil)
    /// Files a thread takes at once: mostly one folder's, so that two threads seldom wait on one
    /// folder's lock to create their files.
    private static let chunk = 128

    init(top: Int32, plan: CheckoutPlan, origin: Repository.Origin, workers: Int) throws {
        self.top = top
        self.plan = plan
        let count = max(1, min(workers, (plan.files.count + Self.chunk - 1) / Self.chunk))
        handles = try (0..<count).map { _ in try Repository.reopen(origin, ownPacks: true) }
        written = .allocate(capacity: plan.files.count)
        written.initialize(repeating: stat())
    }

    deinit {
        written.deallocate()
    }

    /// Writes every file; the stat data of each, in the plan's order.
    func run() throws -> [stat] {
        DispatchQueue.concurrentPerform(iterations: handles.count) { worker in
            var folder = (index: -1, descriptor: Int32(-1))
            defer { if folder.descriptor >= 0 { close(folder.descriptor) } }
            while failure.withLock({ $0 == nil }) {
                let start = nextChunk.add(Self.chunk, ordering: .relaxed).oldValue
                guard start < plan.files.count else { return }
                do {
                    for index in start..<min(start + Self.chunk, plan.files.count) {
                        let file = plan.files[index]
                        if folder.index != file.folder {
                            if folder.descriptor >= 0 { close(folder.descriptor) }
                            folder = (-1, -1)
                            folder = (file.folder, try openFolder(file.folder))
                        }
                        written[index] = try write(file, in: folder.descriptor, from: handles[worker])
                    }
                } catch {
                    failure.withLock { if $0 == nil { $0 = error } }
                }
            }
        }
        if let error = failure.withLock({ $0 }) { throw error }
        return Array(written)
    }

    /// Opens folder `index` of the plan by name from the top, never following a link.
    private func openFolder(_ index: Int) throws -> Int32 {
        var descriptor = dup(top)
        guard descriptor >= 0 else { throw Self.failure(plan, folder: index, errno) }
        for name in plan.chain(of: index) {
            let next = Self.openFolder(name, in: descriptor)
            close(descriptor)
            guard next.result >= 0 else { throw Self.failure(plan, folder: index, next.error) }
            descriptor = next.result
        }
        return descriptor
    }

    static func openFolder(_ name: [UInt8], in parent: Int32) -> (result: Int32, error: Int32) {
        withCName(name) { openat(parent, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
    }

    /// The most one `write` is given (macOS refuses more than 2 GiB at once).
    private static let writeLimit = 1 << 30

    private func write(_ file: CheckoutPlan.File, in folder: Int32, from repository: Repository) throws -> stat {
        try repository.withBlobContent(file.id) { bytes in
            var info = stat()
            if file.mode == 0o120000 {
                // The target's bytes as stored, whatever their encoding (the plan left targets git
                // writes otherwise, as with a NUL in them, to libgit2).
                let target = Array(bytes) + [0]
                let made = target.withUnsafeBytes { target in
                    withCName(file.name) { symlinkat(target.baseAddress!.assumingMemoryBound(to: CChar.self), folder, $0) }
                }
                guard made.result == 0 else { throw Self.failure(file, made.error) }
                let stated = withCName(file.name) { fstatat(folder, $0, &info, AT_SYMLINK_NOFOLLOW) }
                guard stated.result == 0 else { throw Self.failure(file, stated.error) }
                return info
            }
            let opened = withCName(file.name) {
                openat(folder, $0, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, file.mode == 0o100755 ? 0o755 : 0o644)
            }
            guard opened.result >= 0 else { throw Self.failure(file, opened.error) }
            let descriptor = opened.result
            var offset = 0
            while offset < bytes.count {
                let count = Foundation.write(descriptor, bytes.baseAddress! + offset, min(bytes.count - offset, Self.writeLimit))
                if count < 0, errno == EINTR { continue }
                guard count > 0 else {
                    let error = count == 0 ? EIO : errno
                    close(descriptor)
                    throw Self.failure(file, error)
                }
                offset += count
            }
            // The stat data of the file written, not of whatever may take its name later.
            guard fstat(descriptor, &info) == 0 else {
                let error = errno
                close(descriptor)
                throw Self.failure(file, error)
            }
            // A network file system may report a full disk only now.
            guard close(descriptor) == 0 else { throw Self.failure(file, errno) }
            return info
        }
    }

    private static func failure(_ file: CheckoutPlan.File, _ error: Int32) -> CohortError {
        failure(CheckoutPlan.shown(file.path), error)
    }

    static func failure(_ plan: CheckoutPlan, folder: Int, _ error: Int32) -> CohortError {
        failure(CheckoutPlan.shown(plan.path(of: folder)), error, folder: true)
    }

    private static func failure(_ shown: String, _ error: Int32, folder: Bool = false) -> CohortError {
        let what = folder ? "the folder \(shown)" : shown
        switch error {
        case EEXIST, ELOOP, ENOTDIR:
            return CohortError(.io, "cannot write \(what): something else is in its place",
                               hint: "something was put in the folder meanwhile, or this file system takes two of its names as one; clone into a new, empty folder")
        case ENOSPC, EDQUOT:
            return CohortError(.io, "cannot write \(what): the disk is full", hint: "make room, then clone again")
        case ENAMETOOLONG:
            return CohortError(.io, "cannot write \(what): the path is too long for this file system", hint: "clone into a folder with a shorter path, or tell the collaboration's owner")
        default:
            return CohortError(.io, "cannot write \(what): \(String(cString: strerror(error)))", hint: "check the disk, then clone again")
        }
    }
}
