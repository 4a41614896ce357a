import CohortBase
import CohortCollaboration
import CohortGit
@testable import CohortHooks
import CohortTestSupport
@testable import CohortVerification
import CohortWorkspace
import Foundation
import Synchronization
import Testing

/// A resident verifier (`ResidentVerifier`) running on a thread of the test, at a short socket path.
final class RunningVerifier {
    let socket: URL
    let verifier: ResidentVerifier
    private let ended = DispatchSemaphore(value: 0)
    private let stopped = Mutex(false)

    init(socket: URL = RunningVerifier.freshSocket(), concurrentPushes: Int = 4, program: URL? = nil) throws {
        self.socket = socket
        verifier = try ResidentVerifier(socket: socket, concurrentPushes: concurrentPushes, program: program)
        let thread = Thread { [verifier, ended] in
            verifier.run()
            ended.signal()
        }
        thread.start()
    }

    /// Pushes it has verified so far.
    var answered: Int { verifier.answered.load(ordering: .relaxed) }

    /// Whether `run` returned on its own within `seconds`.
    func endsOnItsOwn(within seconds: Int) -> Bool {
        guard ended.wait(timeout: .now() + .seconds(seconds)) == .success else { return false }
        stopped.withLock { $0 = true }
        return true
    }

    func stop() {
        guard stopped.withLock({ let was = $0; $0 = true; return !was }) else { return }
        verifier.stop()
        ended.wait()
    }

    deinit { stop() }

    /// A socket path short enough for `sockaddr_un` (a test's temporary folder may not be).
    static func freshSocket() -> URL {
        URL(fileURLWithPath: "/tmp/cohort-rv-\(UUID().uuidString.prefix(8)).sock")
    }
}

/// A stand-in for a resident verifier, in Python: reads each request whole, then answers as `mode`
/// says (`close`: nothing; `elsewhere`; `badmagic`; `truncated`: a verdict cut off; `accept`:
/// accepts everything). Started as `user` when given (the tests run as root).
final class FakeVerifier {
    let socket: URL
    private let process = Process()

    init(mode: String, user: String? = nil) throws {
        // A folder the other user can read and write (a test's temporary folder is root's alone).
        let folder = URL(fileURLWithPath: "/tmp/cohort-fake-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        #expect(chmod(folder.path, 0o777) == 0)
        socket = folder.appendingPathComponent("v.sock")
        let script = folder.appendingPathComponent("fake-verifier.py")
        try Data(Self.script.utf8).write(to: script)
        #expect(chmod(script.path, 0o644) == 0)
        // The system's Python: another user cannot reach one installed under root's home.
        let python = [FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") ? "/usr/bin/python3" : "python3", script.path, socket.path, mode]
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = user.map { ["setpriv", "--reuid=\($0)", "--regid=\($0)", "--clear-groups"] + python } ?? python
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: socket.path + ".ready"), Date() < deadline { usleep(20_000) }
        #expect(FileManager.default.fileExists(atPath: socket.path + ".ready"), "the fake verifier did not start")
    }

    deinit {
        // SIGKILL: a child of the test process inherits a signal mask that blocks SIGTERM.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: socket.deletingLastPathComponent())
    }

    static let script = #"""
    import os, socket, struct, sys
    path, mode = sys.argv[1], sys.argv[2]
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    os.chmod(path, 0o777)
    server.listen(8)
    open(path + ".ready", "w").close()
    def exactly(c, n):
        data = b""
        while len(data) < n:
            more = c.recv(n - len(data))
            if not more:
                raise EOFError
            data += more
        return data
    def field(text):
        data = text.encode()
        return struct.pack(">I", len(data)) + data
    while True:
        c, _ = server.accept()
        try:
            for _ in range(9):
                exactly(c, struct.unpack(">I", exactly(c, 4))[0])
            if mode == "elsewhere":
                c.sendall(field("cohort-hook-reply 1") + field("elsewhere") + field(""))
            elif mode == "badmagic":
                c.sendall(field("cohort-hook-reply 2") + field("accept") + field(""))
            elif mode == "truncated":
                c.sendall(field("cohort-hook-reply 1") + field("accept") + struct.pack(">I", 100) + b"cohort: ")
            elif mode == "accept":
                c.sendall(field("cohort-hook-reply 1") + field("accept") + field("cohort: fake: accepted\n"))
        except EOFError:
            pass
        c.close()
    """#
}

/// `cohort hook serve` and the hooks installed with `--resident`: the same verdicts as the hook run
/// for each push, and never a push let through by a verifier that is not there, not this user's,
/// not this version, or that stops before its whole answer.
@Suite struct ResidentVerifierTests {
    /// An unsigned commit on the owner's main, made with stock git (outside `cohort commit`).
    func unsignedCommit(in server: HookServer) throws -> ObjectID {
        let owner = server.scenario.owner
        try server.scenario.write("plain \(UUID().uuidString)\n", to: "plain.md", in: owner)
        #expect(try run("git", ["add", "plain.md"], in: owner.directory).status == 0)
        let environment = ["GIT_AUTHOR_NAME": "X", "GIT_AUTHOR_EMAIL": "x@example.com", "GIT_COMMITTER_NAME": "X", "GIT_COMMITTER_EMAIL": "x@example.com"]
        #expect(try run("git", ["-c", "commit.gpgsign=false", "commit", "-q", "-m", "plain"], in: owner.directory, environment: environment).status == 0)
        return try owner.head().commit
    }

    @Test(arguments: Transport.allCases)
    func pushesAreVerifiedByTheResidentVerifierWithTheHooksVerdict(transport: Transport) throws {
        let server = try HookServer(transport: transport)
        let resident = try RunningVerifier()
        defer { resident.stop() }
        try server.useResident(resident.socket)
        let owner = server.scenario.owner
        _ = try owner.comment(on: "shortbread.md", text: "more butter")
        try server.expectAccepted(owner)
        #expect(resident.answered == 1)

        let good = try owner.head().commit
        let bad = try unsignedCommit(in: server)
        let refused = try server.expectRefused(owner, "E_BAD_SIGNATURE", at: bad)
        #expect(resident.answered == 2)
        // The hook run for the push says exactly the same.
        try server.use(.cohortHook)
        #expect(try server.expectRefused(owner, "E_BAD_SIGNATURE", at: bad) == refused)
        #expect(try server.tip() == good.hex)
    }

    @Test func withNoVerifierRunningTheHookVerifiesThePushItself() throws {
        let server = try HookServer(transport: .local)
        try server.useResident(RunningVerifier.freshSocket())
        let owner = server.scenario.owner
        _ = try owner.comment(on: "shortbread.md", text: "more butter")
        try server.expectAccepted(owner)
        let bad = try unsignedCommit(in: server)
        let lines = try server.expectRefused(owner, "E_BAD_SIGNATURE", at: bad)
        #expect(lines.count == 1, "\(lines)")
    }

    /// A verifier that stops before its whole answer, answers in another protocol, or hands the push
    /// on, never decides it: the hook verifies the push itself, and refuses what it refuses.
    @Test(arguments: ["close", "badmagic", "truncated", "elsewhere"])
    func aVerifierThatDoesNotAnswerWholeNeverLetsAPushThrough(mode: String) throws {
        let server = try HookServer(transport: .local)
        let fake = try FakeVerifier(mode: mode)
        try server.useResident(fake.socket)
        let owner = server.scenario.owner
        let bad = try unsignedCommit(in: server)
        let lines = try server.expectRefused(owner, "E_BAD_SIGNATURE", at: bad)
        #expect(!lines.contains { $0.contains("fake: accepted") }, "\(lines)")
    }

    /// Only a verifier of the hook's own user is asked: another user's socket that accepts everything
    /// is passed over (with a note), and the push is verified by the hook.
    @Test(.enabled(if: geteuid() == 0, "needs root, to start a process as another user"))
    func aVerifierOfAnotherUserIsNeverTrusted() throws {
        let server = try HookServer(transport: .local)
        let fake = try FakeVerifier(mode: "accept", user: "65534")
        try server.useResident(fake.socket)
        let owner = server.scenario.owner
        let bad = try unsignedCommit(in: server)
        let before = try server.tip()
        let result = try server.push(owner)
        #expect(result.status != 0)
        #expect(result.stderr.contains("cohort: note: the resident verifier at \(fake.socket.path) runs as another user; the push is verified here"),
                "\(result.stderr)")
        #expect(result.stderr.contains("cohort: rejected \(bad.hex)") && result.stderr.contains(": E_BAD_SIGNATURE: "), "\(result.stderr)")
        #expect(!result.stderr.contains("fake: accepted"), "\(result.stderr)")
        #expect(try server.tip() == before)
    }

    /// The client run by hand: a verifier of another version hands the push back, and an input past
    /// the hook's limit, or a push into a namespace, is never sent; either way the program named after
    /// it gets the whole input.
    @Test func anotherVersionOrAnInputTooLargeGoesToTheProgram() throws {
        let temp = try TemporaryDirectory()
        let resident = try RunningVerifier()
        defer { resident.stop() }
        let client = HookInstaller.client(beside: cohortBinary).path
        let counting = ["/bin/sh", "-c", "wc -c >&2; exit 3"]
        let old = try run(client, [resident.socket.path, "0.0.1"] + counting, in: temp.url, environment: ["GIT_DIR": "."],
                          stdin: Data("0000 1111 refs/heads/main\n".utf8))
        #expect(old.status == 3 && old.stderr.trimmingCharacters(in: .whitespacesAndNewlines) == "26", "\(old.stderr)")
        let large = Data(repeating: UInt8(ascii: "a"), count: PreReceiveHook.maxInputBytes + 10)
        let tooLarge = try run(client, [resident.socket.path, CohortVersion.text] + counting, in: temp.url, environment: ["GIT_DIR": "."], stdin: large)
        #expect(tooLarge.status == 3 && tooLarge.stderr.trimmingCharacters(in: .whitespacesAndNewlines) == "\(large.count)", "\(tooLarge.stderr)")
        // What the verifier is not told (a namespace, a work tree, a common folder, even set empty),
        // or a user configuration other than its own: such a push is the program's too.
        let input = Data("0000 1111 refs/heads/main\n".utf8)
        for variable in [["GIT_NAMESPACE": "team"], ["GIT_WORK_TREE": ""], ["GIT_COMMON_DIR": ""], ["HOME": "/nonexistent"]] {
            let handed = try run(client, [resident.socket.path, CohortVersion.text] + counting, in: temp.url,
                                 environment: variable.merging(["GIT_DIR": "."]) { first, _ in first }, stdin: input)
            #expect(handed.status == 3, "\(variable): \(handed.stderr)")
        }
        #expect(resident.answered == 0)
        let usage = try run(client, [resident.socket.path], in: temp.url)
        #expect(usage.status == 64 && usage.stderr.hasPrefix("error: E_USAGE: cohort-hook-client takes"), "\(usage.stderr)")
    }

    /// A `.git` file inside the bare repository, naming another repository that remembers the
    /// attacker's commit as verified: given that folder as `GIT_DIR`, the verifier opens it, as the
    /// hook does, never the one the file names, and both refuse the commit with the same line.
    @Test func theVerifierOpensTheFolderGitNamesNeverADotGitInIt() throws {
        let server = try HookServer(transport: .local)
        let resident = try RunningVerifier()
        defer { resident.stop() }
        let owner = server.scenario.owner
        let good = try #require(try server.tip())
        let bad = try unsignedCommit(in: server)
        // The commit's objects into the repository past the hook, under a ref the rules never read.
        #expect(try run("git", ["--git-dir", server.bare.path, "fetch", "-q", owner.directory.path, "+refs/heads/main:refs/attack/x"],
                        in: server.scenario.temp.url).status == 0)
        let elsewhere = server.scenario.temp.path("elsewhere.git")
        #expect(try run("cp", ["-a", server.bare.path, elsewhere.path], in: server.scenario.temp.url).status == 0)
        let memory = elsewhere.appendingPathComponent("cohort/verified")
        try (try Data(contentsOf: memory) + Data((bad.hex + "\n").utf8)).write(to: memory)
        try Data("gitdir: \(elsewhere.path)\n".utf8).write(to: server.bare.appendingPathComponent(".git"))

        let input = Data("\(good) \(bad.hex) refs/heads/main\n".utf8)
        let hook = HookInstaller.sibling(of: cohortBinary).path
        let environment = ["GIT_DIR": server.bare.path]
        let asked = try run(HookInstaller.client(beside: cohortBinary).path,
                            [resident.socket.path, CohortVersion.text, hook, "pre-receive", "--expect-version", CohortVersion.text],
                            in: server.bare, environment: environment, stdin: input)
        #expect(resident.answered == 1)
        let itself = try run(hook, ["pre-receive", "--expect-version", CohortVersion.text], in: server.bare, environment: environment, stdin: input)
        #expect(asked.status == 1 && itself.status == 1)
        #expect(asked.stderr == itself.stderr)
        #expect(asked.stderr.contains("cohort: rejected \(bad.hex) (refs/heads/main): E_BAD_SIGNATURE: commit is not signed"), "\(asked.stderr)")
    }

    /// The default branch moves only forward, through the resident verifier as through the hook: a
    /// sync's merge whose first parent is Cy's offline commit, reaching the server's tip only through
    /// its second parent (past the first parents `isAncestor` reads itself), is taken; a rewind forced
    /// by the owner is refused with the hook's line, and nothing of Cy's is lost.
    @Test func theDefaultBranchMovesOnlyForwardThroughTheResidentVerifier() throws {
        let server = try HookServer(transport: .local)
        let scenario = server.scenario
        let resident = try RunningVerifier()
        defer { resident.stop() }
        try server.useResident(resident.socket)
        let cy = try server.clone("cy", for: scenario.cy)
        let owner = scenario.owner
        try scenario.write("more\n", to: "shortbread.md", in: owner)
        _ = try #require(try owner.commitChanges(message: "More"))
        try server.expectAccepted(owner)
        let offline = Data("cy offline \u{1F370}\n".utf8)
        try offline.write(to: cy.directory.appendingPathComponent("cy.md"))
        let synced = try run(cohortBinary.path, ["sync"], in: cy.directory, environment: ["COHORT_HOME": scenario.cy.home.directory.path])
        #expect(synced.status == 0, "\(synced.stderr)")
        let ownersTip = try owner.head().commit
        let merge = try cy.repository.commit(cy.head().commit)
        #expect(merge.parents.count == 2 && merge.parents[1] == ownersTip, "\(merge.parents)")
        #expect(try server.tip() == cy.head().commit.hex)
        #expect(try Data(contentsOf: cy.directory.appendingPathComponent("cy.md")) == offline)
        #expect(resident.answered == 2)

        let before = try server.tip()
        #expect(try run("git", ["pull", "-q", "--ff-only", server.remote, "main"], in: owner.directory).status == 0)
        let previous = try owner.repository.commit(owner.head().commit).parents[0]
        try owner.repository.updateReference("refs/heads/main", to: previous, expected: owner.head().commit, message: "rewind")
        let refused = try server.expectRefused(owner, "E_NOT_PERMITTED", at: previous, force: true)
        #expect(resident.answered == 3)
        try server.use(.cohortHook)
        #expect(try server.expectRefused(owner, "E_NOT_PERMITTED", at: previous, force: true) == refused)
        #expect(try server.tip() == before)
    }

    /// The verifier keeps the trees each push read for the next (`GitRuntime.keepTrees`): attacks
    /// built on a commit it has just accepted, whose trees it holds, get the verdict the hook program
    /// gives them (a notice deleted, a notice rewritten, a file added beside the notices, a file where
    /// a notice's folder was), the kept trees answer reads on the way, and a good push after them
    /// still lands.
    @Test func treesKeptFromTheLastPushChangeNoVerdict() throws {
        let server = try HookServer(transport: .local)
        let scenario = server.scenario
        let resident = try RunningVerifier()
        defer { resident.stop() }
        try server.useResident(resident.socket)
        let bo = try server.clone("bo", for: scenario.bo)
        let me = try signer(scenario.bo.home, in: bo)
        try server.keepPushesAsPacks()
        let (accepted, path) = try server.acceptedEditWithNotice(by: bo)
        let rewritten = try Attacks.signatureByteChanged(Data(contentsOf: bo.directory.appendingPathComponent(path)))
        let folder = String(path[..<(try #require(path.lastIndex(of: "/")))])
        let attacks: [(removing: Set<String>, files: [String: Data], code: String)] = [
            ([path], [:], "E_NOT_PERMITTED"),
            ([], [path: rewritten], "E_NOT_PERMITTED"),
            ([], [CohortLayout.folder + "/notes.txt": Data("beside the notices\n".utf8)], "E_NOT_PERMITTED"),
            // A file where the notice's folder was: every notice in it gone at once.
            ([], [folder: Data("a file now\n".utf8)], "E_NOT_PERMITTED"),
        ]
        for attack in attacks {
            let reads = GitRuntime.keptTrees.reads
            let forged = try forge(bo, signer: me, files: attack.files, removing: attack.removing)
            try server.useResident(resident.socket)
            let refused = try server.expectRefused(bo, attack.code, at: forged)
            #expect(GitRuntime.keptTrees.reads > reads, "the verifier read trees it kept from the accepted push")
            try server.use(.cohortHook)
            #expect(try server.expectRefused(bo, attack.code, at: forged) == refused)
            #expect(try server.tip() == accepted.hex)
            try bo.repository.updateReference("refs/heads/main", to: accepted, expected: forged, message: "back")
        }
        try server.useResident(resident.socket)
        try Data("more rye\n".utf8).write(to: bo.directory.appendingPathComponent("rye.md"))
        _ = try #require(try bo.commitChanges(message: "more rye"))
        try server.expectAccepted(bo)
        #expect(resident.answered == 2 + attacks.count)
    }

    /// Pushes to a repository the verifier served before are read while git indexes them: their
    /// commits' and notices' signatures checked ahead (`IncomingPacks`). What is found checked never
    /// stands in for a rule: a stranger's commit whose signer and notices all check ahead, another
    /// participant's signature over Bo's proof, and a hundred good notices with one whose signature
    /// was changed each get the hook program's exact lines; a good push after them lands, its notices
    /// found checked.
    @Test func packsReadWhileGitIndexesThemChangeNoVerdict() throws {
        IncomingPacks.claimsWait.store(true, ordering: .relaxed)
        defer { IncomingPacks.claimsWait.store(false, ordering: .relaxed) }
        let server = try HookServer(transport: .local)
        let scenario = server.scenario
        let resident = try RunningVerifier()
        defer { resident.stop() }
        try server.useResident(resident.socket)
        try server.keepPushesAsPacks()
        let bo = try server.clone("bo", for: scenario.bo)
        let me = try signer(scenario.bo.home, in: bo)
        // The first push makes the verifier watch the repository.
        let (good, _) = try server.acceptedEditWithNotice(by: bo)
        var changed = try Attacks.noticeFiles(100, by: me, in: scenario.identifier)
        let odd = try #require(changed.keys.sorted().first)
        changed[odd] = try Attacks.signatureByteChanged(#require(changed[odd]))
        let eve = try signer(TestPerson.make("eve", in: scenario.temp).home, in: bo)
        // The changed byte falls in the signature's values: refused, with the same lines from both verifiers.
        let attacks: [(name: String, code: String?, foundAhead: Bool, make: () throws -> ObjectID)] = [
            ("a stranger's commit", "E_UNKNOWN_ROOT", true, { try forge(bo, signer: eve, files: Attacks.noticeFiles(100, by: eve, in: scenario.identifier)) }),
            // Refused for its signature before any notice is opened: nothing checked ahead is asked for.
            ("Cy's signature over Bo's proof", "E_BAD_SIGNATURE", false,
             { try forge(bo, signer: signer(scenario.cy.home, in: bo), files: Attacks.noticeFiles(100, by: me, in: scenario.identifier), trailer: me) }),
            ("one notice's signature changed", "E_BAD_SIGNATURE", true, { try forge(bo, signer: me, files: changed) }),
        ]
        for attack in attacks {
            try Attacks.point(bo, at: good)
            let forged = try attack.make()
            try server.useResident(resident.socket)
            let hits = CheckedAhead.hits.load(ordering: .relaxed)
            let refused = try server.expectRefused(bo, attack.code, at: forged)
            #expect(CheckedAhead.hits.load(ordering: .relaxed) > hits || !attack.foundAhead, "\(attack.name): nothing was found checked ahead")
            try server.use(.cohortHook)
            #expect(try server.expectRefused(bo, attack.code, at: forged) == refused, "\(attack.name)")
            #expect(try server.tip() == good.hex)
        }
        try Attacks.point(bo, at: good)
        try server.useResident(resident.socket)
        let hits = CheckedAhead.hits.load(ordering: .relaxed)
        _ = try server.acceptedEditWithNotice(by: bo)
        // The commit's signer and its notice.
        #expect(CheckedAhead.hits.load(ordering: .relaxed) >= hits + 2)
        #expect(resident.answered == 2 + attacks.count)
    }

    /// What the watch of incoming packs reads, and what it leaves alone. Links (in place of a pack, or
    /// of a quarantine) and a pipe are never opened, and the watch goes on past them; a pack written a
    /// few hundred bytes at a time as git writes one is read as it grows, and claimed the way a push's
    /// answer claims it (without waiting), its notices are found checked; a quarantine nobody claims is
    /// let go when git removes it; a repository made again at its path is watched anew.
    @Test func incomingPacksReadOnlyWhatGitWrites() throws {
        let scenario = try Scenario()
        let owner = scenario.owner
        let me = try signer(owner.home, in: owner)
        let scratch = scenario.temp.path("scratch")
        #expect(try run("git", ["init", "-q", scratch.path], in: scenario.temp.url).status == 0)
        // Two packs of three notices each, as git writes them.
        func pack(_ label: String) throws -> (data: Data, blobs: [ObjectID]) {
            var blobs: [ObjectID] = []
            for (index, data) in try Attacks.noticeFiles(3, by: me, in: scenario.identifier).values.enumerated() {
                let file = scratch.appendingPathComponent("\(label)\(index).json")
                try data.write(to: file)
                blobs.append(try ObjectID(hex: run("git", ["hash-object", "-w", file.path], in: scratch).stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            }
            let packed = try run("/bin/sh", ["-c", "printf '%s\\n' \(blobs.map(\.hex).joined(separator: " ")) | git pack-objects -q --window=0 --stdout > \(label).pack"], in: scratch)
            #expect(packed.status == 0, "\(packed.stderr)")
            return (try Data(contentsOf: scratch.appendingPathComponent("\(label).pack")), blobs)
        }
        // Each quarantine its own notices: results kept and not taken stay while any checks are alive.
        let linkedTo = try pack("linked"), real = try pack("real"), refusedPack = try pack("refused"), againPack = try pack("again")

        let objects = scenario.temp.path("watched/objects")
        try FileManager.default.createDirectory(at: objects, withIntermediateDirectories: true)
        let incoming = try #require(IncomingPacks())
        defer { incoming.stop() }
        IncomingPacks.claimsWait.store(true, ordering: .relaxed)
        incoming.watch(objects: objects.path)
        IncomingPacks.claimsWait.store(false, ordering: .relaxed)
        func waitUntil(_ condition: () -> Bool) {
            for _ in 0..<1000 where !condition() { usleep(10_000) }
        }
        func quarantine(_ name: String) throws -> URL {
            let folder = objects.appendingPathComponent("tmp_objdir-incoming-\(name)")
            try FileManager.default.createDirectory(at: folder.appendingPathComponent("pack"), withIntermediateDirectories: true)
            return folder
        }
        func writeSlowly(_ data: Data, to file: URL) throws {
            #expect(FileManager.default.createFile(atPath: file.path, contents: nil))
            let writer = try FileHandle(forWritingTo: file)
            var offset = 0
            while offset < data.count {
                let end = min(data.count, offset + 300)
                try writer.write(contentsOf: data[offset..<end])
                offset = end
                usleep(1_000)
            }
            try writer.close()
        }
        try linkedTo.data.write(to: scratch.appendingPathComponent("linked-target.pack"))

        // A quarantine holding a link to a pack, a pipe, then a real pack: only the real one is read.
        let mixed = try quarantine("mixed")
        try FileManager.default.createSymbolicLink(at: mixed.appendingPathComponent("pack/tmp_pack_a_link"),
                                                   withDestinationURL: scratch.appendingPathComponent("linked-target.pack"))
        #expect(mkfifo(mixed.appendingPathComponent("pack/tmp_pack_b_pipe").path, 0o600) == 0)
        try writeSlowly(real.data, to: mixed.appendingPathComponent("pack/tmp_pack_c_real"))
        // A link in place of a quarantine, to a folder holding a pack: never followed.
        let elsewhere = scenario.temp.path("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere.appendingPathComponent("pack"), withIntermediateDirectories: true)
        try linkedTo.data.write(to: elsewhere.appendingPathComponent("pack/tmp_pack_elsewhere"))
        try FileManager.default.createSymbolicLink(at: objects.appendingPathComponent("tmp_objdir-incoming-link"), withDestinationURL: elsewhere)
        try FileManager.default.createDirectory(at: elsewhere.appendingPathComponent("pack2"), withIntermediateDirectories: true)

        // Claimed as a push's answer claims it, once the checks have kept all three.
        waitUntil { incoming.kept(quarantine: mixed.path) == 3 }
        #expect(incoming.kept(quarantine: mixed.path) == 3)
        #expect(incoming.packsBeingRead == 1, "a link or a pipe was opened")
        let early = try #require(incoming.claim(quarantine: mixed.path))
        for blob in real.blobs {
            #expect(CheckedAhead.notice(blob) != nil, "notice \(blob.hex) was not checked ahead")
        }
        for blob in linkedTo.blobs {
            #expect(CheckedAhead.notice(blob) == nil, "notice \(blob.hex) was read through a link")
        }
        withExtendedLifetime(early) {}
        #expect(incoming.packsBeingRead == 0)
        #expect(incoming.claim(quarantine: objects.appendingPathComponent("tmp_objdir-incoming-link").path) == nil)

        // Unclaimed, and its quarantine removed (a push git refused before the hook): let go.
        let refused = try quarantine("refused")
        try refusedPack.data.write(to: refused.appendingPathComponent("pack/tmp_pack_refused"))
        waitUntil { incoming.packsBeingRead == 1 }
        #expect(incoming.packsBeingRead == 1)
        try FileManager.default.removeItem(at: refused)
        waitUntil { incoming.packsBeingRead == 0 }
        #expect(incoming.packsBeingRead == 0)

        // The repository removed and made again at the same path, while a file the old one held stays
        // open (as a kept map of its pack would): the new folder is watched anew.
        let held = objects.appendingPathComponent("held")
        try Data("held\n".utf8).write(to: held)
        let holder = try FileHandle(forReadingFrom: held)
        defer { try? holder.close() }
        try FileManager.default.removeItem(at: objects)
        try FileManager.default.createDirectory(at: objects, withIntermediateDirectories: true)
        IncomingPacks.claimsWait.store(true, ordering: .relaxed)
        incoming.watch(objects: objects.path)
        IncomingPacks.claimsWait.store(false, ordering: .relaxed)
        let again = try quarantine("again")
        try againPack.data.write(to: again.appendingPathComponent("pack/tmp_pack_again"))
        waitUntil { incoming.kept(quarantine: again.path) == 3 }
        #expect(incoming.kept(quarantine: again.path) == 3, "the folder made again is not watched")
    }

    /// A verifier busy with as many pushes as it takes answers `elsewhere`: the next push is verified
    /// by its hook, with the same verdict.
    @Test func aBusyVerifierLeavesThePushToTheHook() throws {
        let server = try HookServer(transport: .local)
        let resident = try RunningVerifier(concurrentPushes: 1)
        defer { resident.stop() }
        try server.useResident(resident.socket)
        // A client that connects and says nothing holds the only place for up to 10 s.
        let silent = Process()
        silent.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        silent.arguments = ["python3", "-c", "import socket, sys, time; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print('in', flush=True); time.sleep(8)",
                            resident.socket.path]
        let said = Pipe()
        silent.standardOutput = said
        try silent.run()
        defer { kill(silent.processIdentifier, SIGKILL); silent.waitUntilExit() }
        #expect(String(decoding: said.fileHandleForReading.readData(ofLength: 3), as: UTF8.self) == "in\n")
        usleep(200_000)
        let owner = server.scenario.owner
        _ = try owner.comment(on: "shortbread.md", text: "more butter")
        try server.expectAccepted(owner)
        let bad = try unsignedCommit(in: server)
        #expect(try server.expectRefused(owner, "E_BAD_SIGNATURE", at: bad).count == 1)
        #expect(resident.answered == 0)
    }

    /// `--resident` needs the client beside the cohort that installs: without it nothing is written.
    @Test func installingForAResidentVerifierNeedsTheClient() throws {
        let server = try HookServer(transport: .local, pushOwner: false)
        let script = server.bare.appendingPathComponent("hooks/pre-receive")
        let before = try Data(contentsOf: script)
        let alone = server.scenario.temp.path("cohort-alone")
        try FileManager.default.createDirectory(at: alone, withIntermediateDirectories: true)
        let binary = alone.appendingPathComponent("cohort")
        try FileManager.default.createSymbolicLink(at: binary, withDestinationURL: cohortBinary)
        do {
            _ = try HookInstaller.install(into: server.bare, binary: binary, chain: false, resident: RunningVerifier.freshSocket())
            Issue.record("installed without cohort-hook-client")
        } catch let error as CohortError {
            #expect(error.description == "E_NOT_FOUND: \(alone.path)/cohort-hook-client is not there (build it with `make release`, which puts it beside cohort)")
        }
        #expect(try Data(contentsOf: script) == before)
    }

    /// Requests that are not a client's are dropped, and the verifier goes on answering.
    @Test func malformedRequestsAreDropped() throws {
        let server = try HookServer(transport: .local)
        let resident = try RunningVerifier()
        defer { resident.stop() }
        try server.useResident(resident.socket)
        let environment = ProcessInfo.processInfo.environment
        let home = [Data((environment["HOME"] ?? "").utf8), Data((environment["XDG_CONFIG_HOME"] ?? "").utf8)]
        let hostile: [Data] = [
            Data([0xFF, 0xFF, 0xFF, 0xFF]),                                                // a field of 4 GiB
            HookWire.encode([Data("cohort-hook-request 9".utf8)] + Array(repeating: Data(), count: 8)),  // another protocol
            HookWire.encode([Data(HookWire.requestMagic.utf8), Data(CohortVersion.text.utf8), Data("relative".utf8)]
                            + Array(repeating: Data(), count: 3) + home + [Data()]),      // no GIT_DIR, a relative folder
            HookWire.encode([Data(HookWire.requestMagic.utf8), Data(CohortVersion.text.utf8), Data(server.bare.path.utf8), Data(".".utf8),
                             Data(), Data(), Data([0xFF, 0xFE])] + home.suffix(1) + [Data()]),  // a HOME that is not UTF-8
            Data("GET / HTTP/1.1\r\n\r\n".utf8),
        ]
        for bytes in hostile {
            let reply = try exchange(bytes, with: resident.socket)
            #expect(reply.isEmpty || reply.contains(Data("elsewhere".utf8)), "\(String(decoding: reply, as: UTF8.self))")
        }
        #expect(resident.answered == 0)
        let owner = server.scenario.owner
        _ = try owner.comment(on: "shortbread.md", text: "more butter")
        try server.expectAccepted(owner)
        #expect(resident.answered == 1)
    }

    /// Writes `bytes`, closes the writing side, and reads what comes back until the verifier closes.
    func exchange(_ bytes: Data, with socket: URL) throws -> Data {
        let handle = try run("python3", ["-c", """
            import socket, sys
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect(sys.argv[1])
            out = b""
            try:
                s.sendall(sys.stdin.buffer.read()); s.shutdown(socket.SHUT_WR)
                while True:
                    more = s.recv(65536)
                    if not more: break
                    out += more
            except (ConnectionResetError, BrokenPipeError):
                pass  # the verifier hung up on the request
            sys.stdout.buffer.write(out)
            """, socket.path], in: URL(fileURLWithPath: "/tmp"), stdin: bytes)
        #expect(handle.status == 0, "\(handle.stderr)")
        return Data(handle.stdout.utf8)
    }

    /// The socket: a live verifier's is never taken over, a file that is not a socket is never
    /// replaced, a stale one (its verifier gone) is; it is the owner's alone, and gone after a stop.
    @Test func theSocketIsGuarded() throws {
        let temp = try TemporaryDirectory()
        let path = RunningVerifier.freshSocket()
        let resident = try RunningVerifier(socket: path)
        var status = stat()
        #expect(lstat(path.path, &status) == 0 && status.st_mode & 0o777 == 0o600)
        #expect(throws: CohortError(.busy, "")) { try ResidentVerifier(socket: path) }
        resident.stop()
        #expect(!FileManager.default.fileExists(atPath: path.path))

        let file = RunningVerifier.freshSocket()
        try Data("mine\n".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(throws: CohortError(.io, "")) { try ResidentVerifier(socket: file) }
        #expect(try Data(contentsOf: file) == Data("mine\n".utf8))

        // A socket whose verifier was killed: bound, never unlinked.
        let stale = RunningVerifier.freshSocket()
        #expect(try run("python3", ["-c", "import socket, sys; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])", stale.path], in: temp.url).status == 0)
        let replacing = try RunningVerifier(socket: stale)
        replacing.stop()
        #expect(!FileManager.default.fileExists(atPath: stale.path))
        #expect(throws: CohortError(.usage, "")) { try ResidentVerifier(socket: URL(fileURLWithPath: "/tmp/" + String(repeating: "s", count: 120))) }
    }

    /// The variables `cohort serve` warns of are exactly those the client never sends (its C list).
    @Test func theVariablesLeftToTheHookAreTheClients() throws {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/cohort-hook-client/main.c")
        let text = try String(contentsOf: source, encoding: .utf8)
        let start = try #require(text.range(of: "const char *unsent[] = {"))
        let end = try #require(text.range(of: "};", range: start.upperBound..<text.endIndex))
        let names = text[start.upperBound..<end.lowerBound].split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " \n\"")) }
        #expect(names == ResidentVerifier.variablesLeftToTheHook)
    }

    /// A verifier whose program file is replaced (an upgrade in place) would verify by other rules
    /// than the hook program now does: it hands the push back and ends. One whose socket is removed
    /// or taken (another verifier's now) ends too, rather than listen where nobody can reach it.
    @Test func aVerifierWhoseProgramOrSocketIsReplacedEnds() throws {
        let server = try HookServer(transport: .local)
        let program = server.scenario.temp.path("cohort-copy")
        try Data("version one".utf8).write(to: program)
        let socket = RunningVerifier.freshSocket()
        let resident = try RunningVerifier(socket: socket, program: program)
        try server.useResident(socket)
        let owner = server.scenario.owner
        _ = try owner.comment(on: "shortbread.md", text: "more butter")
        try server.expectAccepted(owner)
        #expect(resident.answered == 1)

        try AtomicFile.write(Data("version two".utf8), to: program, mode: 0o755, replacing: true)
        _ = try owner.comment(on: "shortbread.md", text: "less sugar")
        try server.expectAccepted(owner)
        #expect(resident.answered == 1, "the push went back to the hook")
        #expect(resident.endsOnItsOwn(within: 10))
        #expect(resident.verifier.endedBecause.withLock { $0 }?.contains("\(program.path) was replaced") == true)
        #expect(!FileManager.default.fileExists(atPath: socket.path))

        let taken = try RunningVerifier(socket: RunningVerifier.freshSocket())
        #expect(unlink(taken.socket.path) == 0)
        #expect(taken.endsOnItsOwn(within: 10), "a verifier whose socket is gone ends within its look interval")
        #expect(taken.verifier.endedBecause.withLock { $0 }?.contains("was removed or replaced") == true)
        let bad = try unsignedCommit(in: server)
        try server.useResident(taken.socket)
        _ = try server.expectRefused(owner, "E_BAD_SIGNATURE", at: bad)
    }

    /// The commands as a user runs them: `cohort hook serve --socket`, `cohort hook install
    /// --resident`, a push, and SIGTERM, which reports what was verified and removes the socket.
    @Test func serveAndInstallThroughTheCommandLine() throws {
        let server = try HookServer(transport: .local)
        let socket = RunningVerifier.freshSocket()
        let relative = try run(cohortBinary.path, ["hook", "install", server.bare.path, "--resident", "verifier.sock"], in: server.scenario.temp.url)
        #expect(relative.status == 1 && relative.stderr.hasPrefix("error: E_USAGE: the resident verifier's socket verifier.sock is not an absolute path"),
                "\(relative.stderr)")
        let installed = try run(cohortBinary.path, ["hook", "install", server.bare.path, "--resident", socket.path], in: server.scenario.temp.url)
        #expect(installed.status == 0, "\(installed.stderr)")

        let process = Process()
        process.executableURL = cohortBinary
        process.arguments = ["hook", "serve", "--socket", socket.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        while !FileManager.default.fileExists(atPath: socket.path), Date() < deadline { usleep(20_000) }
        let owner = server.scenario.owner
        _ = try owner.comment(on: "shortbread.md", text: "more butter")
        try server.expectAccepted(owner)
        process.terminate()
        process.waitUntilExit()
        let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0)
        #expect(said == "verifying pushes for the hooks installed with --resident \(socket.path) (SIGTERM or Ctrl-C stops)\nstopped; 1 push verified\n", "\(said)")
        #expect(!FileManager.default.fileExists(atPath: socket.path))
    }
}
