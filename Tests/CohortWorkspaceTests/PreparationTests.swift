import CohortCollaboration
import CohortGit
import CohortIdentity
import CohortTestSupport
import CohortVerification
import CohortWorkspace
import Foundation
import Testing

/// Long histories are checked ahead on several threads; the answers must be those of one thread.
@Suite struct PreparationTests {
    @Test func preparedAndSequentialVerificationAgree() throws {
        let scenario = try Scenario()
        let owner = scenario.owner
        for index in 0..<70 {
            try scenario.write("revision \(index)\n", to: "notes-\(index % 5).md", in: owner)
            _ = try #require(try owner.commitChanges(message: "revision \(index)"))
            if index == 40 { _ = try owner.comment(on: "shortbread.md", text: "half way, @bo@example.com") }
        }
        let tip = try owner.head().commit
        for threads in [1, 2, 4] {
            let verifier = HistoryVerifier(repository: owner.repository)
            let all = try owner.repository.commits(from: tip)
            verifier.prepare(all, threads: threads)
            for id in all { try verifier.verify(id) }
            #expect(all.count == 73)
        }

        // A bad notice deep in the history is found at the same commit either way.
        let bo = try signer(scenario.bo.home, in: owner)
        let notice = Notice(type: .contentEdited, collaboration: scenario.identifier, actor: bo.root, data: ["path": "x.md"], signer: bo.signer)
        let bad = try forge(owner, signer: signer(scenario.cy.home, in: owner), files: [notice.path: sealed(notice, by: bo)])
        for _ in 0..<3 {
            try scenario.write("after \(UUID())\n", to: "after.md", in: owner)
            _ = try forge(owner, signer: signer(scenario.ann.home, in: owner), files: ["after.md": Data(UUID().uuidString.utf8)])
        }
        for threads in [1, 2] {
            let verifier = HistoryVerifier(repository: owner.repository)
            let all = try owner.repository.commits(from: owner.head().commit)
            verifier.prepare(all, threads: threads)
            do {
                for id in all { try verifier.verify(id) }
                Issue.record("the bad commit was accepted with \(threads) threads")
            } catch let violation as Violation {
                #expect(violation.commit == bad)
                #expect(violation.error.code == .notPermitted)
            }
        }
    }
}
