import CohortBase
import CohortCollaboration
import CohortGit
import CohortTestSupport
@testable import CohortVerification
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

    /// One commit adding many notices (a real sync's size): its notices are opened on every core, and
    /// one among them signed by someone else, or not JSON, refuses that commit as one thread would.
    @Test func oneCommitWithManyNoticesOpenedOnEveryCore() throws {
        let scenario = try Scenario()
        let owner = scenario.owner
        let ann = try signer(owner.home, in: owner)
        let bo = try signer(scenario.bo.home, in: owner)
        let base = try owner.head().commit
        let good = try forge(owner, signer: ann, files: Attacks.noticeFiles(100, by: ann, in: scenario.identifier))
        // Bo's notice, well formed and signed by him, in a commit Ann signs.
        let byBo = try forge(owner, signer: ann, files: Attacks.noticeFiles(100, by: ann, in: scenario.identifier, foreign: bo, at: 57))
        try Attacks.point(owner, at: good)
        let notJSON = try forge(owner, signer: ann, files: Attacks.noticeFiles(40, by: ann, in: scenario.identifier, odd: (31, { notice in
            (notice.path, try Attacks.envelope(payload: Data("{".utf8), by: ann))
        })))
        for (tip, refused, code) in [(byBo, byBo, CohortError.Code.notPermitted), (notJSON, notJSON, .malformed)] {
            let verifier = HistoryVerifier(repository: owner.repository)
            let all = try owner.repository.commits(from: tip, hiding: [base])
            #expect(all.first == good)
            do {
                for id in all { try verifier.verify(id) }
                Issue.record("\(refused.hex) was accepted")
            } catch let violation as Violation {
                #expect(violation.commit == refused)
                #expect(violation.error.code == code, "\(violation.error)")
            }
        }
    }

    /// One commit adding more notices than are held read at a time (`CommitPreparation.noticeChunk`, 512):
    /// past them the reader opens one itself before reading more, every notice is opened, and one far
    /// into the list signed by someone else refuses the commit as in a short one.
    @Test func oneCommitWithMoreNoticesThanAChunk() throws {
        let scenario = try Scenario()
        let owner = scenario.owner
        let ann = try signer(owner.home, in: owner)
        let bo = try signer(scenario.bo.home, in: owner)
        let base = try owner.head().commit
        let count = 2 * 512 + 37
        let good = try forge(owner, signer: ann, files: Attacks.noticeFiles(count, by: ann, in: scenario.identifier))
        try Attacks.point(owner, at: base)
        let byBo = try forge(owner, signer: ann, files: Attacks.noticeFiles(count, by: ann, in: scenario.identifier, foreign: bo, at: count - 20))
        // Four threads whatever the machine has, so that the notices are opened beside the walk.
        let accepting = HistoryVerifier(repository: owner.repository)
        accepting.prepare([], threads: 4)
        try accepting.verify(good)
        let refusing = HistoryVerifier(repository: owner.repository)
        refusing.prepare([], threads: 4)
        do {
            try refusing.verify(byBo)
            Issue.record("\(byBo.hex) was accepted")
        } catch let violation as Violation {
            #expect(violation.commit == byBo)
            #expect(violation.error.code == .notPermitted, "\(violation.error)")
        }
    }

    /// A pipeline's worker opens a commit's notices before the rules know whether its signer may
    /// commit: at most a chunk of them, and none of a merge's; more are left to the rules.
    @Test(arguments: [512, 513]) func aWorkerOpensAtMostAChunkAhead(count: Int) throws {
        let scenario = try Scenario()
        let owner = scenario.owner
        let ann = try signer(owner.home, in: owner)
        let commit = try forge(owner, signer: ann, files: Attacks.noticeFiles(count, by: ann, in: scenario.identifier))
        let prepared = try CommitPreparation.prepare(commit, in: owner.repository, opening: .here)
        #expect(prepared.added.count == count)
        #expect(prepared.notices.count == (count <= CommitPreparation.noticeChunk ? count : 0))
        #expect(!prepared.readFailed)
    }

    /// A merge's notices are never opened ahead by a worker, however few: its state may come from
    /// another parent, where its signer may have been removed.
    @Test func aWorkerOpensNoneOfAMergesNoticesAhead() throws {
        let scenario = try Scenario()
        let owner = scenario.owner
        let ann = try signer(owner.home, in: owner)
        let base = try owner.head().commit
        let side = try forge(owner, signer: ann, files: ["side.md": Data("side\n".utf8)])
        try Attacks.point(owner, at: base)
        let merge = try forge(owner, signer: ann, files: Attacks.noticeFiles(8, by: ann, in: scenario.identifier), parents: [base, side])
        let prepared = try CommitPreparation.prepare(merge, in: owner.repository, opening: .here)
        #expect(prepared.added.count == 8)
        #expect(prepared.notices.isEmpty)
        // The rules still take it: it is a good merge.
        let verifier = HistoryVerifier(repository: owner.repository)
        for id in try owner.repository.commits(from: merge, hiding: [base]) { try verifier.verify(id) }
    }

    /// A notices folder past libgit2's 4 KiB cache limit, and commits that change many of its buckets:
    /// the walk reads more trees through the thread's memo than it holds, while the outer folders are
    /// still being read. Prepared on several threads, the answers are those of one.
    @Test func manyNoticeFoldersPerCommitAgreeAcrossThreads() throws {
        let scenario = try Scenario()
        let owner = scenario.owner
        for index in 0..<200 { try scenario.write("first \(index)\n", to: "wide/file-\(index).md", in: owner) }
        _ = try #require(try owner.commitChanges(message: "two hundred files"))
        for round in 0..<66 {
            for index in 0..<12 { try scenario.write("round \(round)\n", to: "wide/file-\((round * 12 + index) % 200).md", in: owner) }
            _ = try #require(try owner.commitChanges(message: "round \(round)"))
        }
        let all = try owner.repository.commits(from: owner.head().commit)
        for threads in [1, 2, 4] {
            let verifier = HistoryVerifier(repository: owner.repository)
            verifier.prepare(all, threads: threads)
            for id in all { try verifier.verify(id) }
        }
    }

    /// Two branches pushed at once that both reach a refused commit deep in a long history: the second
    /// update must not wait for a preparation the first already took (it used to hang the hook).
    @Test(.timeLimit(.minutes(2))) func twoUpdatesReachingOneRefusedCommitBothGetAnAnswer() throws {
        let scenario = try Scenario()
        let owner = scenario.owner
        let (branch, base) = try owner.head()
        let ann = try signer(owner.home, in: owner)
        // Signed with the owner's key under another participant's proof.
        let bad = try forge(owner, signer: ann, files: ["bad.md": Data("x\n".utf8)], trailer: signer(scenario.bo.home, in: owner))
        for index in 0..<70 { try forge(owner, signer: ann, files: ["after-\(index).md": Data("\(index)\n".utf8)]) }
        let tip = try owner.head().commit
        try owner.repository.updateReference(branch, to: base, expected: tip, message: "back")
        let rejections = try PushVerifier(repository: owner.repository).verify([
            RefUpdate(old: .zero, new: tip, name: "refs/heads/a"), RefUpdate(old: .zero, new: tip, name: "refs/heads/b"),
        ])
        #expect(rejections.map(\.ref) == ["refs/heads/a", "refs/heads/b"])
        #expect(rejections.allSatisfy { $0.commit == bad })
    }
}
