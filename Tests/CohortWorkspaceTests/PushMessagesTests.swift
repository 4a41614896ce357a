import CohortGit
import CohortTestSupport
import Foundation
import Testing

/// What a folder remote's hooks say reaches the pusher, however much progress git wrote first.
@Suite struct PushMessagesTests {
    @Test func aRefusingHooksReasonsSurviveLongProgress() throws {
        let scenario = try Scenario()
        let bare = scenario.temp.path("server.git")
        #expect(try run("git", ["init", "-q", "--bare", bare.path], in: scenario.temp.url).status == 0)
        // 80 KiB of progress-shaped lines first (git's own kind, redrawn), then the reason.
        let hook = bare.appendingPathComponent("hooks/pre-receive")
        try Data("""
        #!/bin/sh
        cat >/dev/null
        i=0; while [ $i -lt 2000 ]; do echo "Resolving deltas: 50% (1/2) padding padding"; i=$((i+1)); done >&2
        echo "policy says no" >&2
        exit 1

        """.utf8).write(to: hook)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: hook.path)
        let result = try scenario.owner.repository.pushWithGit(remote: bare.path, refspecs: ["refs/heads/main:refs/heads/main"],
                                                               progress: { _ in })
        #expect(result.refused.map(\.ref) == ["refs/heads/main"])
        #expect(result.remoteMessages == ["policy says no"], "\(result.remoteMessages.prefix(3))")
    }
}
