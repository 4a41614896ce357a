import CohortIdentity
import CohortRemote
import CohortServerAPI
import CohortTestSupport
import Foundation
import Testing

extension SharedStateTests {
    /// A read-write token bought at instance `at` for `home`'s person.
    static func pushToken(_ hosted: Hosted, _ home: IdentityHome, at instance: Int = 0) async throws -> String {
        let answer = try await token(hosted, proof(hosted, home, at: instance, operation: .push), at: instance, operation: .push)
        #expect(answer.status == 200, "\(answer.text)")
        return try ServerAPI.decode(ServerAPI.TokenResponse.self, from: answer.body, what: "token").token
    }

    /// Stock git talking to one instance directly: the token as a bearer, the Host clients use.
    static func gitAt(_ hosted: Hosted, _ instance: Int, token: String, _ arguments: [String], in directory: URL) throws -> Process {
        let host = URL(string: hosted.link)!.authority
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git", "-c", "http.extraHeader=Host: \(host)", "-c", "http.extraHeader=Authorization: Bearer \(token)",
                             "-c", "credential.helper="] + arguments
        process.currentDirectoryURL = directory
        process.environment = ProcessInfo.processInfo.environment.merging(["GIT_TERMINAL_PROMPT": "0"]) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        return process
    }

    static func fsck(_ hosted: Hosted) throws -> ProcessResult {
        try run("git", ["--git-dir", hosted.temp.path("data/collaborations/\(hosted.identifier).git").path, "fsck", "--strict", "--no-dangling"],
                in: hosted.temp.url)
    }

    @Test("two pushes to one collaboration at once through both instances: one lands, the other is refused whole, its retry after a pull lands")
    func racingPushesThroughBothInstances() async throws {
        let hosted = try Hosted(instances: 2)
        let scenario = hosted.scenario
        var clones: [(TestPerson, URL, String)] = []
        for (index, person) in [scenario.bo, scenario.cy].enumerated() {
            let folder = hosted.temp.path("clone-\(person.handle)")
            let cloned = try hosted.cohort(["clone", hosted.link, folder.path], as: person.home)
            #expect(cloned.status == 0, "\(cloned.stderr)")
            try Data("\(person.handle) was here\n".utf8).write(to: folder.appendingPathComponent("note-\(index).md"))
            #expect(try hosted.cohort(["commit", "-m", "note"], as: person.home, in: folder).status == 0)
            clones.append((person, folder, try await Self.pushToken(hosted, person.home, at: index)))
        }
        let before = try hosted.serverTip()
        let pushes = try clones.enumerated().map { index, clone in
            try Self.gitAt(hosted, index, token: clone.2, ["push", "\(hosted.addresses[index])/c/\(hosted.identifier)", "HEAD:refs/heads/main"], in: clone.1)
        }
        for push in pushes { try push.run() }
        for push in pushes { push.waitUntilExit() }
        let statuses = pushes.map(\.terminationStatus)
        #expect(statuses.sorted() == [0, 1], "\(statuses)")
        let tip = try hosted.serverTip()
        let heads = try clones.map { try run("git", ["rev-parse", "HEAD"], in: $0.1).stdout.trimmingCharacters(in: .whitespacesAndNewlines) }
        #expect(tip != before && heads.contains(tip))
        #expect(try Self.fsck(hosted).status == 0)
        // The loser pulls, merges and pushes through nginx.
        let loser = clones[statuses.firstIndex(of: 1) ?? 0]
        let synced = try hosted.cohort(["sync"], as: loser.0.home, in: loser.1)
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(try hosted.serverTip() == run("git", ["rev-parse", "HEAD"], in: loser.1).stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(try Self.fsck(hosted).status == 0)
    }

    @Test("an instance killed in the middle of a push leaves no partial ref; the retry through nginx lands on the other")
    func instanceKilledDuringAPush() async throws {
        let hosted = try Hosted(instances: 2)
        let ann = hosted.scenario.owner.directory
        let home = hosted.scenario.ann.home
        let random = try #require(FileHandle(forReadingAtPath: "/dev/urandom"))
        try random.readData(ofLength: 48 << 20).write(to: ann.appendingPathComponent("scan.bin"))
        #expect(try hosted.cohort(["commit", "-m", "a large scan"], as: home, in: ann).status == 0)
        let before = try hosted.serverTip()
        let token = try await Self.pushToken(hosted, home, at: 0)
        let push = try Self.gitAt(hosted, 0, token: token, ["push", "\(hosted.addresses[0])/c/\(hosted.identifier)", "HEAD:refs/heads/main"], in: ann)
        try push.run()
        // As soon as git receive-pack runs under instance 0, kill it.
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, try run("pgrep", ["-f", "receive-pack.*\(hosted.identifier)"], in: hosted.temp.url).status != 0 {
            usleep(20_000)
        }
        kill(hosted.servers[0].process.processIdentifier, SIGKILL)
        push.waitUntilExit()
        #expect(push.terminationStatus != 0, "the push was cut off")
        let after = try hosted.serverTip()
        let head = try run("git", ["rev-parse", "HEAD"], in: ann).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(after == before || after == head, "the ref is the old or the new commit, nothing else")
        #expect(try Self.fsck(hosted).status == 0)
        let synced = try hosted.cohort(["sync"], as: home, in: ann)
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(try hosted.serverTip() == head)
        #expect(try Self.fsck(hosted).status == 0)
    }

    @Test("stock git with git-credential-cohort, and cohort clone, work through nginx unchanged")
    func gitThroughNginx() throws {
        let hosted = try Hosted(instances: 2)
        let bo = hosted.scenario.bo
        let folder = hosted.temp.path("bo-git")
        let cloned = try hosted.git(["clone", hosted.link, folder.path], as: bo.home)
        #expect(cloned.status == 0, "\(cloned.stderr)")
        #expect(try run("git", ["rev-parse", "HEAD"], in: folder).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == hosted.serverTip())
        let viaCohort = hosted.temp.path("bo-cohort")
        let cohortClone = try hosted.cohort(["clone", hosted.link, viaCohort.path], as: bo.home)
        #expect(cohortClone.status == 0, "\(cohortClone.stderr)")
        try Data("from bo through nginx\n".utf8).write(to: viaCohort.appendingPathComponent("nginx.md"))
        #expect(try hosted.cohort(["commit", "-m", "through nginx"], as: bo.home, in: viaCohort).status == 0)
        let pushed = try hosted.git(["push", "origin", "HEAD:refs/heads/main"], as: bo.home, in: viaCohort)
        #expect(pushed.status == 0, "\(pushed.stderr)")
        let pulled = try hosted.git(["pull", "--ff-only"], as: bo.home, in: folder)
        #expect(pulled.status == 0, "\(pulled.stderr)")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("nginx.md").path))
    }
}
