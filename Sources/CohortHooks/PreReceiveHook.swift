import CohortBase
import CohortGit
import CohortVerification
import Foundation

/// `cohort hook pre-receive`: git's input in, refusals out.
public enum PreReceiveHook {
    /// Largest input accepted (1,000 ref updates fit in well under 1 MiB); past it, `PushLimits.tooManyUpdatesHint`.
    public static let maxInputBytes = 1 << 20

    /// Parses git's `OLD NEW REF` lines. Git runs the hooks only for a push that updates something,
    /// and ends every line with a newline: input that is empty or stops inside a line was cut short
    /// (a full disk under a chained hook's copy, say), and could leave updates unchecked.
    public static func updates(from input: Data) throws -> [RefUpdate] {
        guard input.last == UInt8(ascii: "\n") else {
            throw CohortError(.malformed, input.isEmpty ? "the hook got no ref updates from git" : "the hook's input from git stops inside a line",
                              hint: "check the free space where a hook chained before this one copies its input, then push again; run by hand, give the ref updates on standard input, one line each")
        }
        return try String(decoding: input, as: UTF8.self).split(separator: "\n").map { try RefUpdate(line: $0) }
    }

    /// The limits for `repository`: defaults, or `cohort.maxCommits`, `cohort.maxUpdates` and
    /// `cohort.maxSeconds` from its git configuration.
    public static func limits(for repository: Repository) throws -> PushLimits {
        var limits = PushLimits()
        if let value = try repository.configInteger("cohort.maxCommits"), value > 0 { limits.maxCommits = Int(value) }
        if let value = try repository.configInteger("cohort.maxUpdates"), value > 0 { limits.maxUpdates = Int(value) }
        if let value = try repository.configInteger("cohort.maxSeconds"), value > 0 { limits.maxSeconds = Double(value) }
        return limits
    }

    /// The whole of `cohort hook pre-receive` and of `cohort-hook pre-receive`: git's ref updates read
    /// from standard input (at most `maxInputBytes`, else `E_TOO_LARGE`), one `cohort: rejected …` line on standard error
    /// per refusal (git shows them to the pusher), or one `cohort: error: CODE: …` line when the push
    /// cannot be checked at all. Returns the exit status: 0 accepts the push, 1 refuses it.
    public static func main() -> Int32 {
        let verdict: Verdict
        do {
            verdict = self.verdict(input: try AtomicFile.readStandardInput(maxBytes: maxInputBytes, what: "pre-receive input", hint: PushLimits.tooManyUpdatesHint),
                                   origin: .environment)
        } catch {
            verdict = Verdict(error)
        }
        FileHandle.standardError.write(Data(verdict.text.utf8))
        return verdict.status
    }

    /// What the hook answers git: the lines it writes on standard error and its exit status.
    public struct Verdict: Sendable, Equatable {
        /// 0 accepts the push, 1 refuses it.
        public let status: Int32
        /// Whole lines, each ending in a newline (none for an accepted push).
        public let text: String

        init(_ rejections: [PushRejection]) {
            status = rejections.isEmpty ? 0 : 1
            text = rejections.map { "cohort: \($0)\n" }.joined()
        }

        init(_ error: any Error) {
            status = 1
            text = "cohort: error: \(CohortError(error, otherwise: .git))\n"
        }
    }

    /// The verdict on the push `input` describes, in the repository `origin` names (inside
    /// `pre-receive`, `.environment`: the quarantined objects included).
    public static func verdict(input: Data, origin: Repository.Origin) -> Verdict {
        do {
            let updates = try updates(from: input)
            // The hook only reads objects: its packs, the quarantine's first, through a reader of its
            // own (faster than libgit2's, and sharing no lock with the verification's workers).
            return verdict(updates, in: try Repository.reopen(origin, ownPacks: true))
        } catch {
            return Verdict(error)
        }
    }

    /// The verdict on `updates` in `repository`, opened by the caller, who lets it go when it likes
    /// (freeing a handle unmaps its packs: a resident verifier does that after it has answered).
    static func verdict(_ updates: [RefUpdate], in repository: Repository) -> Verdict {
        do {
            return Verdict(try PushVerifier(repository: repository, limits: limits(for: repository)).verify(updates))
        } catch {
            return Verdict(error)
        }
    }

    /// Verifies the branches and tags `repository` already holds, as if each were pushed anew: the hook
    /// counts branches and tags as accepted by itself, so what was there before it must pass once.
    /// Returns the number of commits verified (and remembered) and the refs that fail, with why.
    public static func adoptExisting(at url: URL) throws -> (commits: Int, rejections: [PushRejection]) {
        let repository = try Repository(at: url)
        var updates: [RefUpdate] = []
        for (name, id) in try repository.referenceTips().sorted(by: { $0.key < $1.key })
        where name.hasPrefix("refs/heads/") || name.hasPrefix("refs/tags/") {
            updates.append(RefUpdate(old: .zero, new: id, name: name))
        }
        guard !updates.isEmpty else { return (0, []) }
        let before = VerifiedCommits(repository: repository).load().count
        var limits = try limits(for: repository)
        limits.maxUpdates = max(limits.maxUpdates, updates.count)
        let rejections = try PushVerifier(repository: repository, limits: limits).verify(updates, trustingRefs: false)
        return (VerifiedCommits(repository: repository).load().count - before, rejections)
    }
}
