import CohortGit
import CohortTestSupport
import Foundation
import Testing

/// `Repository.lineOfCommits`, which a push's hook reads instead of walking the whole graph when the
/// push is a line of new commits: a line only, never through a merge or past a root.
@Suite struct LineOfCommitsTests {
    @Test func aLineDownToTheFirstStopParentsFirst() throws {
        let scenario = try Scenario()
        let owner = scenario.owner
        let base = try owner.head().commit
        var made: [ObjectID] = []
        for index in 0..<4 {
            try scenario.write("line \(index)\n", to: "line.md", in: owner)
            made.append(try #require(try owner.commitChanges(message: "line \(index)")).commit)
        }
        let repository = owner.repository
        #expect(repository.lineOfCommits(from: made[3], downTo: [base], limit: 10) == made)
        #expect(repository.lineOfCommits(from: made[3], downTo: [base, made[1]], limit: 10) == Array(made[2...]))
        #expect(repository.lineOfCommits(from: made[1], downTo: [made[1]], limit: 10) == [])
        #expect(repository.lineOfCommits(from: made[3], downTo: [base], limit: 3) == nil, "more than the limit")
        #expect(repository.lineOfCommits(from: made[3], downTo: [], limit: 100) == nil, "down to the root")
        #expect(repository.lineOfCommits(from: try ObjectID(hex: String(repeating: "ab", count: 20)), downTo: [base], limit: 10) == nil,
                "no such commit")

        // Through a merge: nil, whichever parent leads to the stop.
        let identity = ["GIT_AUTHOR_NAME": "Ann", "GIT_AUTHOR_EMAIL": "ann@example.com",
                        "GIT_COMMITTER_NAME": "Ann", "GIT_COMMITTER_EMAIL": "ann@example.com"]
        let tree = try run("git", ["rev-parse", "\(made[3].hex)^{tree}"], in: owner.directory).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let merged = try run("git", ["commit-tree", tree, "-p", made[3].hex, "-p", made[1].hex, "-m", "merge"], in: owner.directory,
                            environment: identity)
        let merge = try ObjectID(hex: merged.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        let above = try ObjectID(hex: try run("git", ["commit-tree", tree, "-p", merge.hex, "-m", "above"], in: owner.directory,
                                              environment: identity).stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(repository.lineOfCommits(from: above, downTo: [merge], limit: 10) == [above])
        #expect(repository.lineOfCommits(from: above, downTo: [made[3]], limit: 10) == nil)
        #expect(repository.lineOfCommits(from: above, downTo: [made[1]], limit: 10) == nil)
        #expect(repository.lineOfCommits(from: merge, downTo: [merge], limit: 10) == [])
    }
}
