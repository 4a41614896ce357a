import CGit2
import CohortBase

/// Throws `E_GIT` with libgit2's own message when `result` is negative. Called right after the libgit2
/// call, on the same thread, so `git_error_last` still describes it.
func check(_ result: Int32, _ action: @autoclosure () -> String) throws {
    guard result < 0 else { return }
    throw gitFailure(result, action())
}

func gitFailure(_ result: Int32, _ action: String) -> CohortError {
    CohortError(.git, "\(action): \(gitMessage(result))")
}

/// libgit2's message for the failure `result` of the last call on this thread.
func gitMessage(_ result: Int32) -> String {
    git_error_last().flatMap { $0.pointee.message.map { String(cString: $0) } } ?? "libgit2 error \(result)"
}
