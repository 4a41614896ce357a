import CGit2
import CohortIdentity

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
        var reference: OpaquePointer?
        try check(git_reference_lookup(&reference, pointer, "HEAD"), "cannot read HEAD")
        defer { git_reference_free(reference) }
        guard let target = git_reference_symbolic_target(reference) else {
            throw CohortError(.git, "HEAD is detached", hint: "check out a branch first")
        }
        return String(cString: target)
    }

    /// Points `name` at `id`, only if it still points at `expected` (nil: only if it does not exist),
    /// so that a concurrent change is refused instead of lost.
    public func updateReference(_ name: String, to id: ObjectID, expected: ObjectID?, message: String) throws {
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
