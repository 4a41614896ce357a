import CGit2
import CGit2Shim
import CohortBase
import Foundation

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
            stamped.pointee.stamp(with: info)
            stamped.pointee.mode = file.mode
        }
        try writeIndex(index)
    }
}
