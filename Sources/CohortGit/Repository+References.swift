import CGit2
import CohortBase

extension Repository {
    /// The commit `name` (a full reference name, `HEAD`, …) points at, or nil if it does not exist yet.
    public func resolve(_ name: String) throws -> ObjectID? {
        var oid = git_oid()
        let result = git_reference_name_to_id(&oid, pointer, name)
        if result == GIT_ENOTFOUND.rawValue || result == GIT_EUNBORNBRANCH.rawValue { return nil }
        try check(result, "cannot resolve \(name)")
        return ObjectID(oid)
    }

    /// The full name of the branch HEAD points at (`refs/heads/main`), born or not.
    public func headBranch() throws -> String {
        let head = try headTarget()
        guard head.branch != nil || head.commit != nil else {
            throw CohortError(.git, "cannot read HEAD: the repository has no HEAD file", hint: "check the repository with `git status`")
        }
        guard let branch = head.branch else { throw CohortError(.git, "HEAD is detached", hint: "check out a branch first") }
        return branch
    }

    /// Points `name` at `id`, only if it still points at `expected` (nil: only if it does not exist),
    /// so that a concurrent change is refused instead of lost.
    public func updateReference(_ name: String, to id: ObjectID, expected: ObjectID?, message: String) throws {
        try flushObjects()
        var reference: OpaquePointer?
        var target = id.raw
        let result: Int32
        if var current = expected?.raw {
            result = git_reference_create_matching(&reference, pointer, name, &target, 1, &current, message)
        } else {
            result = git_reference_create(&reference, pointer, name, &target, 0, message)
        }
        try check(result, "cannot move \(name) to \(id.hex)")
        git_reference_free(reference)
    }
}

extension Repository {
    /// Every reference and the commit it leads to (tags peeled); references that lead to no commit are left out.
    public func referenceTips() throws -> [String: ObjectID] {
        var iterator: OpaquePointer?
        try check(git_reference_iterator_new(&iterator, pointer), "cannot list references")
        defer { git_reference_iterator_free(iterator) }
        var tips: [String: ObjectID] = [:]
        var reference: OpaquePointer?
        while true {
            let result = git_reference_next(&reference, iterator)
            if result == GIT_ITEROVER.rawValue { break }
            try check(result, "cannot list references")
            defer { git_reference_free(reference) }
            guard let name = git_reference_name(reference).map({ String(cString: $0) }) else { continue }
            var peeled: OpaquePointer?
            if git_reference_peel(&peeled, reference, GIT_OBJECT_COMMIT) == 0, let peeled {
                tips[name] = ObjectID(git_object_id(peeled))
                git_object_free(peeled)
            }
        }
        return tips
    }

    /// The commit `id` leads to (a commit, or a tag of one), or nil if it leads to no commit.
    public func peelToCommit(_ id: ObjectID) -> ObjectID? {
        (try? peeledCommit(id)) ?? nil
    }

    /// `peelToCommit`, but an object libgit2 cannot parse (a commit or tag not as git writes it) is
    /// an error saying so, not "no commit".
    public func peeledCommit(_ id: ObjectID) throws -> ObjectID? {
        var object: OpaquePointer?
        var oid = id.raw
        let found = git_object_lookup(&object, pointer, &oid, GIT_OBJECT_ANY)
        guard found == 0 else {
            if found == GIT_ENOTFOUND.rawValue { return nil }
            throw gitFailure(found, "cannot read \(id.hex)")
        }
        defer { git_object_free(object) }
        var peeled: OpaquePointer?
        let result = git_object_peel(&peeled, object, GIT_OBJECT_COMMIT)
        guard result == 0, let peeled else {
            let failure = gitFailure(result, "cannot read \(id.hex)")
            if failure.code == .malformed { throw failure }
            return nil
        }
        defer { git_object_free(peeled) }
        return ObjectID(git_object_id(peeled))
    }

    /// Deletes reference `name` (nothing happens when there is none).
    public func deleteReference(_ name: String) throws {
        let result = git_reference_remove(pointer, name)
        if result == GIT_ENOTFOUND.rawValue { return }
        try check(result, "cannot delete \(name)")
    }

    /// Points HEAD at `branch` (a full reference name), born or not.
    public func setHead(to branch: String) throws {
        try check(git_repository_set_head(pointer, branch), "cannot point HEAD at \(branch)")
    }
}

extension Repository {
    /// An integer from the repository's git configuration (all levels), or nil when unset.
    public func configInteger(_ name: String) throws -> Int64? {
        var value: Int64 = 0
        return try configValue(name, read: { git_config_get_int64(&value, $0, name) }, value: { value }) { result in
            CohortError(.malformed, "git config \(name) is not a whole number (\(gitMessage(result)))",
                        hint: "set it to one, as in `git config \(name) 5000`, or remove it with `git config --unset \(name)`")
        }
    }

    /// A string from the repository's git configuration (all levels), or nil when unset.
    public func configString(_ name: String) throws -> String? {
        var value: UnsafePointer<CChar>?
        // The string lives as long as the snapshot: it is copied before the snapshot is freed.
        return try configValue(name, read: { git_config_get_string(&value, $0, name) }, value: { value.map { String(cString: $0) } }) { result in
            gitFailure(result, "cannot read git config \(name)")
        } ?? nil
    }

    /// A boolean from the repository's git configuration (all levels, read as git reads `true`, `no`,
    /// `1` …), or nil when unset.
    public func configBool(_ name: String) throws -> Bool? {
        var value: Int32 = 0
        return try configValue(name, read: { git_config_get_bool(&value, $0, name) }, value: { value != 0 }) { result in
            CohortError(.malformed, "git config \(name) is not true or false (\(gitMessage(result)))",
                        hint: "set it to true or false, as in `git config \(name) true`")
        }
    }

    /// Reads `name` from a snapshot of the configuration with `read`, then takes `value` while the
    /// snapshot lives; nil when unset, `failure` for any other result.
    private func configValue<T>(_ name: String, read: (OpaquePointer?) -> Int32, value: () -> T,
                                failure: (Int32) -> any Error) throws -> T? {
        var config: OpaquePointer?
        try check(git_repository_config_snapshot(&config, pointer), "cannot read the git configuration")
        defer { git_config_free(config) }
        let result = read(config)
        if result == GIT_ENOTFOUND.rawValue { return nil }
        guard result == 0 else { throw failure(result) }
        return value()
    }

    /// Sets `name` to `value` in the repository's own configuration file (`<git dir>/config`).
    public func setConfig(_ name: String, to value: String) throws {
        try withLocalConfig { local in try check(git_config_set_string(local, name, value), "cannot set git config \(name)") }
    }

    /// Runs `body` with the repository's own configuration file (`<git dir>/config`), opened for writing.
    private func withLocalConfig<T>(_ body: (OpaquePointer?) throws -> T) throws -> T {
        var config: OpaquePointer?
        try check(git_repository_config(&config, pointer), "cannot open the git configuration")
        defer { git_config_free(config) }
        var local: OpaquePointer?
        try check(git_config_open_level(&local, config, GIT_CONFIG_LEVEL_LOCAL), "cannot open the repository's git configuration")
        defer { git_config_free(local) }
        return try body(local)
    }
}

extension Repository {
    /// The commit a revision names (`abc123`, `HEAD~2`, `main`, a tag), as git's rev-parse reads it;
    /// `E_NOT_FOUND` when it names none.
    public func commit(named revision: String) throws -> ObjectID {
        var object: OpaquePointer?
        guard revision.utf8.count <= 256, !revision.hasPrefix("-"), git_revparse_single(&object, pointer, revision) == 0 else {
            throw CohortError(.notFound, "'\(revision.prefix(64))' names no commit here", hint: "use a commit id from `cohort history PATH` or `git log`")
        }
        defer { git_object_free(object) }
        var commit: OpaquePointer?
        guard git_object_peel(&commit, object, GIT_OBJECT_COMMIT) == 0 else {
            throw CohortError(.notFound, "'\(revision.prefix(64))' is not a commit")
        }
        defer { git_object_free(commit) }
        return ObjectID(git_object_id(commit).pointee)
    }
}

extension Repository {
    /// What HEAD names: a branch (full reference name), or the commit of a detached HEAD; nil for
    /// neither (no HEAD file).
    public func headTarget() throws -> (branch: String?, commit: ObjectID?) {
        var reference: OpaquePointer?
        let result = git_reference_lookup(&reference, pointer, "HEAD")
        if result == GIT_ENOTFOUND.rawValue { return (nil, nil) }
        try check(result, "cannot read HEAD")
        defer { git_reference_free(reference) }
        if let target = git_reference_symbolic_target(reference) { return (String(cString: target), nil) }
        return (nil, git_reference_target(reference).map { ObjectID($0) })
    }

    /// Whether a merge, rebase, cherry-pick, revert or bisect is under way (git would say so in
    /// `git status`).
    public var isMidOperation: Bool {
        git_repository_state(pointer) != Int32(GIT_REPOSITORY_STATE_NONE.rawValue)
    }

    /// Renames local branch `name` (short, e.g. `master`) to `newName`, with its reflog and its
    /// configuration (upstream) as `git branch -m` does; HEAD follows when it named the branch.
    public func renameBranch(_ name: String, to newName: String) throws {
        var branch: OpaquePointer?
        try check(git_branch_lookup(&branch, pointer, name, GIT_BRANCH_LOCAL), "there is no branch \(name)")
        defer { git_reference_free(branch) }
        var moved: OpaquePointer?
        try check(git_branch_move(&moved, branch, newName, 0), "cannot rename branch \(name) to \(newName)")
        git_reference_free(moved)
    }

    /// The names of the configured remotes.
    public func remoteNames() throws -> [String] {
        var names = git_strarray()
        try check(git_remote_list(&names, pointer), "cannot list remotes")
        defer { git_strarray_dispose(&names) }
        return (0..<names.count).compactMap { names.strings[$0].map { String(cString: $0) } }
    }

    /// Renames remote `name` to `newName`, with its remote-tracking branches, as `git remote rename` does.
    public func renameRemote(_ name: String, to newName: String) throws {
        var problems = git_strarray()
        defer { git_strarray_dispose(&problems) }
        try check(git_remote_rename(&problems, pointer, name, newName), "cannot rename remote \(name) to \(newName)")
    }
}

extension Repository {
    /// The repository's own (local) configuration entries whose names match `pattern` (a regular
    /// expression, as `git config --get-regexp` takes), in file order.
    public func localConfigEntries(matching pattern: String) throws -> [(name: String, value: String)] {
        try withLocalConfig { local in
            var iterator: OpaquePointer?
            try check(git_config_iterator_glob_new(&iterator, local, pattern), "cannot read the git configuration")
            defer { git_config_iterator_free(iterator) }
            var entries: [(name: String, value: String)] = []
            var entry: UnsafeMutablePointer<git_config_entry>?
            while git_config_next(&entry, iterator) == 0, let entry {
                entries.append((String(cString: entry.pointee.name), entry.pointee.value.map { String(cString: $0) } ?? ""))
            }
            return entries
        }
    }

    /// Paths whose staged content differs both from HEAD and from the file on disk (`git add` then
    /// edited again): staging the folder would drop what was staged.
    public func partlyStagedPaths() throws -> [String] {
        var options = git_status_options()
        try check(git_status_options_init(&options, UInt32(GIT_STATUS_OPTIONS_VERSION)), "status options")
        options.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR
        options.flags = 0
        var list: OpaquePointer?
        try check(git_status_list_new(&list, pointer, &options), "cannot read the status of the folder")
        defer { git_status_list_free(list) }
        let staged = GIT_STATUS_INDEX_NEW.rawValue | GIT_STATUS_INDEX_MODIFIED.rawValue | GIT_STATUS_INDEX_RENAMED.rawValue
            | GIT_STATUS_INDEX_TYPECHANGE.rawValue
        let changedAgain = GIT_STATUS_WT_MODIFIED.rawValue | GIT_STATUS_WT_DELETED.rawValue | GIT_STATUS_WT_TYPECHANGE.rawValue
        var paths: [String] = []
        for index in 0..<git_status_list_entrycount(list) {
            guard let entry = git_status_byindex(list, index) else { continue }
            let status = entry.pointee.status.rawValue
            guard status & staged != 0, status & changedAgain != 0 else { continue }
            if let path = entry.pointee.head_to_index?.pointee.new_file.path ?? entry.pointee.index_to_workdir?.pointee.old_file.path {
                paths.append(String(cString: path))
            }
        }
        return paths
    }

    /// Whether `name` (a full reference name) is a symbolic reference.
    public func isSymbolicReference(_ name: String) -> Bool {
        var reference: OpaquePointer?
        guard git_reference_lookup(&reference, pointer, name) == 0 else { return false }
        defer { git_reference_free(reference) }
        return git_reference_type(reference) == GIT_REFERENCE_SYMBOLIC
    }
}
