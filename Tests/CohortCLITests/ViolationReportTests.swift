import CohortTestSupport
import Foundation
import Testing

/// A history that fails verification reads as one line, `error: CODE: commit SHA: reason`, in every
/// command that reads the history, the same as `cohort verify` prints it.
@Suite struct ViolationReportTests {
    @Test func aHistoryThatFailsVerificationIsOneErrorLineWhereverItIsRead() throws {
        let sandbox = try Sandbox()
        let ann = try sandbox.recipes(["bread.md": "flour\n"])
        // A commit written with git itself: no Cohort signature, no trailer.
        let recipes = sandbox.path("recipes")
        try sandbox.write("recipes/bread.md", "flour\nforged\n")
        let committed = try run("git", ["-c", "user.name=Mallory", "-c", "user.email=m@example.com", "-c", "commit.gpgsign=false",
                                        "commit", "-qam", "forged"], in: recipes)
        #expect(committed.status == 0, "\(committed.stderr)")
        let sha = try run("git", ["rev-parse", "HEAD"], in: recipes).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let verify = try ann.run(["verify"])
        let expected = try #require(verify.stderr.split(separator: "\n").first.map(String.init))
        #expect(expected.hasPrefix("error: E_") && expected.contains("commit \(sha): "), "\(verify.stderr)")
        for arguments in [["history", "bread.md"], ["export", "allowed-signers"], ["notices", "list"]] {
            let result = try ann.run(arguments)
            #expect(result.status == 1, "\(arguments): \(result)")
            let lines = result.stderr.split(separator: "\n").map(String.init)
            #expect(lines.count == 1 && lines.first?.hasPrefix(expected.prefix { $0 != "(" }) == true, "\(arguments): \(result.stderr)")
        }
    }
}
