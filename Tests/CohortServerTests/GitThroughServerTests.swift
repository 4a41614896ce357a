import CohortGit
import CohortTestSupport
import CohortWorkspace
import Foundation
import Testing

/// Stock git (through git-credential-cohort) and `cohort clone` against a real `cohort serve`.
@Suite("git through cohort serve", .serialized)
struct GitThroughServerTests {
    @Test("a participant clones, pulls and pushes with git's protocol v0 and v2", arguments: ["0", "2"])
    func gitRoundTrip(version: String) throws {
        let hosted = try Hosted()
        let bo = hosted.scenario.bo.home
        let clone = hosted.temp.path("bo-\(version)")
        let cloned = try hosted.git(["-c", "protocol.version=\(version)", "clone", hosted.link, clone.path], as: bo)
        #expect(cloned.status == 0, "\(cloned.stderr)")
        #expect(FileManager.default.fileExists(atPath: clone.appendingPathComponent("bread/sourdough.md").path))

        // Bo edits and pushes through the helper; the hook accepts his signed commit.
        try Data("500 g flour, 10 g salt\n".utf8).write(to: clone.appendingPathComponent("bread/sourdough.md"))
        #expect(try hosted.cohort(["commit", "-m", "salt"], as: bo, in: clone).status == 0)
        let pushed = try hosted.git(["-c", "protocol.version=\(version)", "push", "origin", "main"], as: bo, in: clone)
        #expect(pushed.status == 0, "\(pushed.stderr)")
        let boHead = try run("git", ["rev-parse", "HEAD"], in: clone).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try hosted.serverTip() == boHead)

        // Ann pulls it.
        let pulled = try hosted.git(["-c", "protocol.version=\(version)", "pull", "--ff-only", "origin", "main"], as: hosted.scenario.ann.home,
                                    in: hosted.scenario.owner.directory)
        #expect(pulled.status == 0, "\(pulled.stderr)")
        #expect(try String(contentsOf: hosted.scenario.owner.directory.appendingPathComponent("bread/sourdough.md"), encoding: .utf8)
            == "500 g flour, 10 g salt\n")
    }

    @Test("cohort clone verifies the clone and leaves a working workspace")
    func cohortClone() throws {
        let hosted = try Hosted()
        let target = hosted.temp.path("cy-clone")
        let cloned = try hosted.cohort(["clone", hosted.link, target.path], as: hosted.scenario.cy.homes[1])
        #expect(cloned.status == 0, "\(cloned.stderr)")
        #expect(cloned.stdout.trimmingCharacters(in: .newlines) == target.path)
        #expect(cloned.stderr.contains("commits verified"))
        let workspace = try Workspace(containing: target, home: hosted.scenario.cy.homes[1])
        #expect(try workspace.state().collaboration.identifier == hosted.identifier)
        #expect(try workspace.repository.remoteURL("origin") == hosted.link)

        // Without a folder, the title names it.
        let named = try hosted.cohort(["clone", hosted.link], as: hosted.scenario.bo.home)
        #expect(named.status == 0, "\(named.stderr)")
        #expect(FileManager.default.fileExists(atPath: hosted.temp.path("baking-recipes/shortbread.md").path))
    }

    @Test("a history that fails verification is not kept by cohort clone")
    func unverifiableCloneRemoved() throws {
        let hosted = try Hosted()
        // An unsigned commit slipped into the server's repository past the hook (fetched in directly).
        let owner = hosted.scenario.owner.directory
        _ = try run("git", ["-c", "user.name=Mallory", "-c", "user.email=m@example.com", "commit", "-q", "--allow-empty", "-m", "unsigned"], in: owner)
        let bare = hosted.temp.path("data/collaborations/\(hosted.identifier).git")
        #expect(try run("git", ["--git-dir", bare.path, "fetch", "-q", owner.path, "+main:main"], in: hosted.temp.url).status == 0)

        let target = hosted.temp.path("bo")
        let cloned = try hosted.cohort(["clone", hosted.link, target.path], as: hosted.scenario.bo.home)
        #expect(cloned.status == 1)
        #expect(cloned.stderr.hasPrefix("error: E_BAD_SIGNATURE: "), "\(cloned.stderr)")
        #expect(cloned.stderr.contains("the clone was removed"))
        #expect(!FileManager.default.fileExists(atPath: target.path))
    }

    @Test("someone never invited gets nothing, through git or cohort clone")
    func outsiderRefused() throws {
        let hosted = try Hosted()
        let eve = hosted.eve.home
        let viaGit = try hosted.git(["clone", hosted.link, hosted.temp.path("eve-git").path], as: eve)
        #expect(viaGit.status != 0)
        #expect(viaGit.stderr.contains("E_UNKNOWN_ROOT"), "\(viaGit.stderr)")
        #expect(!FileManager.default.fileExists(atPath: hosted.temp.path("eve-git/shortbread.md").path))

        let viaCohort = try hosted.cohort(["clone", hosted.link, hosted.temp.path("eve-cohort").path], as: eve)
        #expect(viaCohort.status == 1)
        #expect(viaCohort.stderr.hasPrefix("error: E_UNKNOWN_ROOT: "), "\(viaCohort.stderr)")
        #expect(!FileManager.default.fileExists(atPath: hosted.temp.path("eve-cohort").path))
    }

    @Test("a read-only participant pulls but cannot push")
    func readOnly() throws {
        let hosted = try Hosted()
        let dee = hosted.dee.home
        let clone = hosted.temp.path("dee")
        #expect(try hosted.git(["clone", hosted.link, clone.path], as: dee).status == 0)
        let before = try hosted.serverTip()
        // She commits locally (signed by hand, as an attacker would: `cohort commit` refuses her).
        try Data("dee's idea\n".utf8).write(to: clone.appendingPathComponent("idea.md"))
        _ = try run("git", ["add", "idea.md"], in: clone)
        _ = try run("git", ["-c", "user.name=Dee", "-c", "user.email=dee@example.com", "commit", "-q", "-m", "idea"], in: clone)
        let pushed = try hosted.git(["push", "origin", "main"], as: dee, in: clone)
        #expect(pushed.status != 0)
        #expect(pushed.stderr.contains("E_NOT_PERMITTED"), "\(pushed.stderr)")
        // The cause is her permission, not her token or her helper.
        #expect(pushed.stderr.contains("read-only") && pushed.stderr.contains("ask its owner"), "\(pushed.stderr)")
        #expect(!pushed.stderr.contains("get a push token"), "\(pushed.stderr)")
        #expect(try hosted.serverTip() == before)
    }

    @Test("an unsigned push is refused by the hook, and git shows the hook's reason")
    func unsignedPushRefused() throws {
        let hosted = try Hosted()
        let bo = hosted.scenario.bo.home
        let clone = hosted.temp.path("bo")
        #expect(try hosted.git(["clone", hosted.link, clone.path], as: bo).status == 0)
        let before = try hosted.serverTip()
        _ = try run("git", ["-c", "user.name=Bo", "-c", "user.email=bo@example.com", "commit", "-q", "--allow-empty", "-m", "unsigned"], in: clone)
        let pushed = try hosted.git(["push", "origin", "main"], as: bo, in: clone)
        #expect(pushed.status != 0)
        #expect(pushed.stderr.contains("remote: cohort: rejected"), "\(pushed.stderr)")
        #expect(pushed.stderr.contains("E_BAD_SIGNATURE"), "\(pushed.stderr)")
        #expect(try hosted.serverTip() == before)
    }

    @Test("a removed participant is refused on the very next request")
    func removalTakesEffectAtOnce() throws {
        let hosted = try Hosted()
        let bo = hosted.scenario.bo.home
        let clone = hosted.temp.path("bo")
        #expect(try hosted.git(["clone", hosted.link, clone.path], as: bo).status == 0)

        let owner = hosted.scenario.owner
        _ = try owner.removeParticipants([hosted.scenario.bo.handle])
        #expect(try hosted.git(["push", "origin", "main"], as: hosted.scenario.ann.home, in: owner.directory).status == 0)

        let fetched = try hosted.git(["fetch", "origin"], as: bo, in: clone)
        #expect(fetched.status != 0)
        #expect(fetched.stderr.contains("E_REVOKED"), "\(fetched.stderr)")
    }

    @Test("a large push streams through (24 MiB of new content)")
    func largePush() throws {
        let hosted = try Hosted()
        let owner = hosted.scenario.owner
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<(24 << 20) / 8).flatMap { _ in withUnsafeBytes(of: generator.next() as UInt64) { Array($0) } }
        try Data(bytes).write(to: owner.directory.appendingPathComponent("photo.raw"))
        #expect(try hosted.cohort(["commit", "-m", "photo"], as: hosted.scenario.ann.home, in: owner.directory).status == 0)
        let pushed = try hosted.git(["push", "origin", "main"], as: hosted.scenario.ann.home, in: owner.directory)
        #expect(pushed.status == 0, "\(pushed.stderr)")
        let clone = hosted.temp.path("cy")
        #expect(try hosted.cohort(["clone", hosted.link, clone.path], as: hosted.scenario.cy.home).status == 0)
        #expect(try Data(contentsOf: clone.appendingPathComponent("photo.raw")) == Data(bytes))
    }

    @Test("20 clones at once all succeed")
    func parallelClones() throws {
        let hosted = try Hosted()
        let results = Results()
        DispatchQueue.concurrentPerform(iterations: 20) { index in
            let home = index.isMultiple(of: 2) ? hosted.scenario.bo.home : hosted.scenario.cy.home
            let target = hosted.temp.path("parallel-\(index)")
            let outcome = Result { try hosted.git(["clone", "-q", hosted.link, target.path], as: home) }
            results.add(index, outcome.map { $0.status == 0 && FileManager.default.fileExists(atPath: target.appendingPathComponent("shortbread.md").path) })
        }
        #expect(results.successes == 20, "\(results.failures)")
    }
}

/// Outcomes gathered from several threads.
final class Results: @unchecked Sendable {
    private let lock = NSLock()
    private var outcomes: [Int: Result<Bool, any Error>] = [:]

    func add(_ index: Int, _ outcome: Result<Bool, any Error>) {
        lock.lock()
        outcomes[index] = outcome
        lock.unlock()
    }

    var successes: Int {
        lock.lock()
        defer { lock.unlock() }
        return outcomes.values.filter { (try? $0.get()) == true }.count
    }

    var failures: [Int] {
        lock.lock()
        defer { lock.unlock() }
        return outcomes.filter { (try? $0.value.get()) != true }.map(\.key).sorted()
    }
}
