import CGit2
import CohortBase

/// Throws `E_GIT` with libgit2's own message when `result` is negative. Called right after the libgit2
/// call, on the same thread, so `git_error_last` still describes it.
func check(_ result: Int32, _ action: @autoclosure () -> String) throws {
    guard result < 0 else { return }
    throw gitFailure(result, action())
}

/// `E_GIT`, or `E_MALFORMED` when libgit2's reader of commits, trees or tags could not parse one
/// ("failed to parse …" from those readers, or from the author line inside a commit): an object not as
/// git writes it is the history's fault, and every reader (the hook, `cohort verify`, clone, sync)
/// reports it the same way. The same words from the configuration's reader (a value that is not a
/// number, a broken config file) stay `E_GIT`, naming the setting.
func gitFailure(_ result: Int32, _ action: String) -> CohortError {
    let message = gitMessage(result)
    let objectReaders = [GIT_ERROR_OBJECT, GIT_ERROR_TREE, GIT_ERROR_TAG, GIT_ERROR_INVALID].map { Int32($0.rawValue) }
    guard message.hasPrefix("failed to parse"), let last = git_error_last(), objectReaders.contains(last.pointee.klass) else {
        return CohortError(.git, "\(action): \(message)")
    }
    return CohortError(.malformed, "\(action): an object in the history is not well formed (\(message))",
                       hint: malformedObjectHint)
}

/// What to do about an object in the history libgit2 cannot parse.
let malformedObjectHint = "the history that holds it cannot be verified; remove the branch or tag that reaches it"

/// libgit2's message for the failure `result` of the last call on this thread.
func gitMessage(_ result: Int32) -> String {
    git_error_last().flatMap { $0.pointee.message.map { String(cString: $0) } } ?? "libgit2 error \(result)"
}
