import CohortBase
import CohortHooks
import Foundation

// `cohort-hook pre-receive`: the verification hook alone, which the scripts `cohort hook install`
// writes run when this program sits beside `cohort`. It links only what verification needs, so it
// starts in about half the time of `cohort`, a cost every push pays; `cohort hook pre-receive` runs
// the same code. `--expect-version V` (the installer's version) refuses every push when this program
// is another version: one left behind by an earlier install must not check by older rules.
// Inside a push, git shows the pusher each line as `remote: cohort: …`.
func fail(_ error: CohortError, status: Int32) -> Never {
    FileHandle.standardError.write(Data("\(status == 64 ? "" : "cohort: ")error: \(error)\n".utf8))
    exit(status)
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments {
case ["--version"]:
    print(CohortVersion.text)
case let words where words.count == 3 && words[0] == "pre-receive" && words[1] == "--expect-version":
    guard words[2] == CohortVersion.text else {
        fail(CohortError(.git, "this hook was installed by cohort \(words[2]), but \(CommandLine.arguments[0]) is version \(CohortVersion.text)",
                         hint: "install cohort and cohort-hook from the same build, then run `cohort hook install` on the repository again"),
             status: 1)
    }
    // Everything the hook says is written unbuffered and every file it writes is closed: the
    // process ends without running the exit handlers of the libraries it links (OpenSSL's,
    // libstdc++'s), work every push would otherwise wait for.
    _exit(PreReceiveHook.main())
default:
    fail(CohortError(.usage, "cohort-hook takes `pre-receive --expect-version VERSION` or `--version`",
                     hint: "git's pre-receive hook runs it; install the hooks with `cohort hook install`"),
         status: 64)
}
