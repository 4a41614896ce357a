import CohortCollaboration
import CohortGit
import CohortTestSupport
import CohortVerification
import CohortWorkspace
import Foundation
import Testing

/// A TCP relay on loopback, in its own process: forwards every byte both ways, unchanged, or with the
/// `Host` header rewritten to `host` (a relay that hides itself).
final class Relay {
    let process = Process()
    let port: Int

    static let script = """
    import socket, sys, threading
    target_port, rewrite = int(sys.argv[1]), sys.argv[2]
    listener = socket.socket(); listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0)); listener.listen(64)
    print(listener.getsockname()[1], flush=True)
    def pipe(source, sink, rewrite_host):
        try:
            while True:
                data = source.recv(65536)
                if not data: break
                if rewrite_host and rewrite != "-":
                    lines = data.split(b"\\r\\n")
                    data = b"\\r\\n".join(b"Host: " + rewrite.encode() if l.lower().startswith(b"host:") else l for l in lines)
                sink.sendall(data)
        except OSError: pass
        finally:
            try: sink.shutdown(socket.SHUT_WR)
            except OSError: pass
    while True:
        client, _ = listener.accept()
        server = socket.create_connection(("127.0.0.1", target_port))
        threading.Thread(target=pipe, args=(client, server, True), daemon=True).start()
        threading.Thread(target=pipe, args=(server, client, False), daemon=True).start()
    """

    init(to port: Int, rewritingHostTo host: String? = nil) throws {
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", Self.script, String(port), host ?? "-"]
        process.standardOutput = output
        try process.run()
        var line = Data()
        while let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data("\n".utf8) { line += byte }
        self.port = Int(String(decoding: line, as: UTF8.self)) ?? 0
    }

    deinit {
        // SIGKILL: the test runner's signal mask, which children inherit, may hold SIGTERM back.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

/// `cohort serve` gives the verification core's verdict over HTTP, and names itself only from its
/// configuration.
@Suite("cohort serve: one verdict, one name", .serialized)
struct ServerVerdictTests {
    /// A hosted collaboration from which Ann has removed Bo (synced to the server), Cy's clone of it
    /// made after that, and the owner's commit from before the removal.
    static func boRemovedCyCloned() throws -> (Hosted, Workspace, beforeRemoval: ObjectID) {
        let hosted = try Hosted()
        let scenario = hosted.scenario
        let ann = scenario.owner
        let beforeRemoval = try ann.head().commit
        #expect(try hosted.cohort(["participants", "remove", scenario.bo.handle], as: scenario.ann.home, in: ann.directory).status == 0)
        #expect(try hosted.cohort(["sync"], as: scenario.ann.home, in: ann.directory).status == 0)
        let folder = hosted.temp.path("cy")
        #expect(try hosted.cohort(["clone", hosted.link, folder.path], as: scenario.cy.home).status == 0)
        return (hosted, try Workspace(containing: folder, home: scenario.cy.home), beforeRemoval)
    }

    @Test("a merge that brings an old membership back is refused over HTTP; the removed person stays out")
    func mergeRollbackRefusedByTheServer() throws {
        let (hosted, cy, beforeRemoval) = try Self.boRemovedCyCloned()
        let scenario = hosted.scenario
        let cyFolder = cy.directory
        let tip = try cy.head().commit
        #expect(try cy.repository.contains(beforeRemoval))
        _ = try commitTree(cy, tree: cy.repository.tree(ofCommit: beforeRemoval), parents: [beforeRemoval, tip],
                           signer: signer(scenario.cy.home, in: cy))
        let pushed = try hosted.git(["push", "origin", "main"], as: scenario.cy.home, in: cyFolder)
        #expect(pushed.status != 0)
        #expect(pushed.stderr.contains("E_NOT_PERMITTED"), "\(pushed.stderr)")
        #expect(try hosted.serverTip() == tip.hex)
        // Bo still cannot get in.
        let bo = try hosted.cohort(["clone", hosted.link, hosted.temp.path("bo").path], as: scenario.bo.home)
        #expect(bo.status != 0)
        #expect(bo.stderr.contains("E_REVOKED"), "\(bo.stderr)")
    }

    @Test("a removed participant's backdated work, pushed as a branch by someone still in, is refused over HTTP")
    func backdatedBranchRefusedByTheServer() throws {
        let (hosted, cy, beforeRemoval) = try Self.boRemovedCyCloned()
        let scenario = hosted.scenario
        let cyFolder = cy.directory
        // Bo signs on the state before his removal; Cy carries it to the server as a branch.
        try Attacks.point(cy, at: beforeRemoval)
        let bo = try CollaborationSigner(home: scenario.bo.home, context: cy.state().context)
        let backdated = try forge(cy, signer: bo, files: ["bo.md": Data("late\n".utf8)], message: "backdated")
        let pushed = try hosted.git(["push", "origin", "\(backdated.hex):refs/heads/bo-work"], as: scenario.cy.home, in: cyFolder)
        #expect(pushed.status != 0)
        #expect(pushed.stderr.contains("E_REVOKED"), "\(pushed.stderr)")
        let bare = hosted.temp.path("data/collaborations/\(hosted.identifier).git")
        #expect(try run("git", ["--git-dir", bare.path, "rev-parse", "--verify", "-q", "refs/heads/bo-work"], in: hosted.temp.url).status != 0)
    }

    @Test("a sync-sized commit with one notice signed by someone else is refused over HTTP at that commit, and cohort verify agrees")
    func foreignNoticeInASyncSizedCommitRefusedByTheServer() throws {
        let hosted = try Hosted()
        let scenario = hosted.scenario
        let (folder, bo, tip, attack) = try hosted.boForgingAForeignNotice(at: 12)
        let pushed = try hosted.git(["push", "origin", "main"], as: scenario.bo.home, in: folder)
        #expect(pushed.status != 0)
        #expect(pushed.stderr.contains("rejected \(attack.hex) (refs/heads/main): E_NOT_PERMITTED"), "\(pushed.stderr)")
        #expect(try hosted.serverTip() == tip.hex)
        expectViolation(.notPermitted, in: bo, at: attack)
    }

    @Test("Bo's real signature in a header before the commit's parent line (where stock git still finds it, and libgit2 reads no commit) is refused over HTTP as malformed, and cohort verify agrees")
    func aSignatureHeaderBeforeTheParentLineRefusedByTheServer() throws {
        let hosted = try Hosted()
        let scenario = hosted.scenario
        let (folder, bo, tip) = try hosted.boCloned()
        let tree = try bo.repository.tree(from: bo.repository.tree(ofCommit: tip), putting: ["odd.md": bo.repository.writeBlob(Data("odd\n".utf8))])
        let made = try Attacks.unsignedCommit(tree: tree, parents: [tip], message: "odd", signer: signer(scenario.bo.home, in: bo), in: bo)
        let text = String(decoding: made.bytes, as: UTF8.self)
        let treeLine = try #require(text.range(of: "\n"))
        let header = "gpgsig " + made.armored.trimmingCharacters(in: .newlines).replacingOccurrences(of: "\n", with: "\n ") + "\n"
        let attack = try Attacks.writeObject(Data((String(text[..<treeLine.upperBound]) + header + String(text[treeLine.upperBound...])).utf8),
                                             type: "commit", in: bo)
        let pushed = try hosted.git(["push", "origin", "\(attack.hex):refs/heads/bo-odd"], as: scenario.bo.home, in: folder)
        #expect(pushed.status != 0)
        #expect(pushed.stderr.contains("rejected \(attack.hex) (refs/heads/bo-odd): E_MALFORMED"), "\(pushed.stderr)")
        let bare = hosted.temp.path("data/collaborations/\(hosted.identifier).git")
        #expect(try run("git", ["--git-dir", bare.path, "rev-parse", "--verify", "-q", "refs/heads/bo-odd"], in: hosted.temp.url).status != 0)
        try Attacks.point(bo, at: attack)
        expectViolation(.malformed, in: bo, at: attack)
    }

    @Test("a folder naming one entry twice (a link, then a folder of the same name) is refused over HTTP at that commit, and cohort verify agrees")
    func aFolderNamingAnEntryTwiceRefusedByTheServer() throws {
        let hosted = try Hosted()
        let scenario = hosted.scenario
        let (folder, bo, tip) = try hosted.boCloned()
        let repository = bo.repository
        let keys = try Attacks.tree([(0o100644, "authorized_keys", repository.writeBlob(Data("written?\n".utf8)))], in: bo)
        let docs = try Attacks.tree([(0o120000, "s", repository.writeBlob(Data("/tmp".utf8))), (0o040000, "s", keys)], in: bo)
        let top = try repository.entries(ofTree: repository.tree(ofCommit: tip)).map { ($0.mode, $0.name, $0.id) }
        let attack = try commitTree(bo, tree: Attacks.tree(top + [(0o040000, "docs", docs)], in: bo), parents: [tip],
                                    signer: signer(scenario.bo.home, in: bo), message: "docs")
        let pushed = try hosted.git(["push", "origin", "main"], as: scenario.bo.home, in: folder)
        #expect(pushed.status != 0)
        #expect(pushed.stderr.contains("rejected \(attack.hex) (refs/heads/main): E_NOT_PERMITTED"), "\(pushed.stderr)")
        #expect(try hosted.serverTip() == tip.hex)
        expectViolation(.notPermitted, in: bo, at: attack)
    }

    @Test("a sync-sized commit with one oversized notice is refused over HTTP at that commit, and cohort verify agrees")
    func oversizedNoticeInASyncSizedCommitRefusedByTheServer() throws {
        let hosted = try Hosted()
        let scenario = hosted.scenario
        let (folder, bo, tip, attack) = try hosted.boForging { me, _ in
            try Attacks.noticeFiles(100, by: me, in: scenario.identifier, oversizedAt: 12)
        }
        let pushed = try hosted.git(["push", "origin", "main"], as: scenario.bo.home, in: folder)
        #expect(pushed.status != 0)
        #expect(pushed.stderr.contains("rejected \(attack.hex) (refs/heads/main): E_TOO_LARGE"), "\(pushed.stderr)")
        #expect(try hosted.serverTip() == tip.hex)
        expectViolation(.tooLarge, in: bo, at: attack)
    }

    @Test("a notices folder of one file more than verification lists, each Bo's real notice, is refused over HTTP for its size, and nothing moves")
    func oneFolderOfMoreNoticesThanTheBoundRefusedByTheServer() throws {
        let hosted = try Hosted()
        let scenario = hosted.scenario
        let (folder, bo, tip, attack) = try hosted.boForging { me, _ in
            try Attacks.oneFolderOfNotices(HistoryVerifier.maxCohortChanges + 1, by: me, in: scenario.identifier)
        }
        let pushed = try hosted.git(["push", "origin", "main"], as: scenario.bo.home, in: folder)
        #expect(pushed.status != 0)
        #expect(pushed.stderr.contains("rejected \(attack.hex) (refs/heads/main): E_TOO_LARGE"), "\(pushed.stderr)")
        #expect(try hosted.serverTip() == tip.hex)
        expectViolation(.tooLarge, in: bo, at: attack)
    }

    @Test("a push of 70 commits, one adding 600 notices with Cy's real one near the end, is refused over HTTP at that commit, and nothing moves")
    func aLongPushWithAForeignNoticeAmongMoreThanAWorkerOpensRefusedByTheServer() throws {
        let hosted = try Hosted()
        let scenario = hosted.scenario
        let (folder, bo, tip, _) = try hosted.boForging { _, _ in ["long-0.md": Data("0\n".utf8)] }
        let me = try signer(scenario.bo.home, in: bo)
        let cy = try signer(scenario.cy.home, in: bo)
        let attack = try Attacks.longPush(1..<70, in: bo, by: me, in: scenario.identifier, foreign: cy)
        let pushed = try hosted.git(["push", "origin", "main"], as: scenario.bo.home, in: folder)
        #expect(pushed.status != 0)
        #expect(pushed.stderr.contains("rejected \(attack.hex) (refs/heads/main): E_NOT_PERMITTED"), "\(pushed.stderr)")
        #expect(try hosted.serverTip() == tip.hex)
        expectViolation(.notPermitted, in: bo, at: attack)
    }

    @Test("once a key checks through its table, a commit carrying its real signature over other bytes is refused over HTTP, and nothing moves")
    func transplantedSignatureRefusedByTheServer() throws {
        let hosted = try Hosted()
        let scenario = hosted.scenario
        let (folder, bo, before) = try hosted.boCloned()
        let attack = try Attacks.transplantedSignatureAfterManyValid(bo, signer: signer(scenario.bo.home, in: bo), in: scenario.identifier)
        let pushed = try hosted.git(["push", "origin", "main"], as: scenario.bo.home, in: folder)
        #expect(pushed.status != 0)
        #expect(pushed.stderr.contains("rejected \(attack.hex) (refs/heads/main): E_BAD_SIGNATURE"), "\(pushed.stderr)")
        #expect(try hosted.serverTip() == before.hex)
        expectViolation(.badSignature, in: bo, at: attack)
    }

    @Test("past 8 valid signatures a key checks through its small table; a notice carrying its real signature over another notice is refused over HTTP, and nothing moves")
    func transplantedNoticeSignatureRefusedByTheServer() throws {
        let hosted = try Hosted()
        let scenario = hosted.scenario
        let (folder, bo, before) = try hosted.boCloned()
        let me = try signer(scenario.bo.home, in: bo)
        try forge(bo, signer: me, files: Attacks.noticeFiles(20, by: me, in: scenario.identifier), message: "twenty notices")
        let attack = try forge(bo, signer: me, files: Attacks.noticeFiles(20, by: me, in: scenario.identifier, transplantedAt: 13),
                               message: "one moved signature")
        let pushed = try hosted.git(["push", "origin", "main"], as: scenario.bo.home, in: folder)
        #expect(pushed.status != 0)
        #expect(pushed.stderr.contains("rejected \(attack.hex) (refs/heads/main): E_BAD_SIGNATURE"), "\(pushed.stderr)")
        #expect(try hosted.serverTip() == before.hex)
        expectViolation(.badSignature, in: bo, at: attack)
    }

    @Test("a relay that forwards requests unchanged gets 421 for everything; one that rewrites Host gets nothing signed")
    func relaysGetNothing() throws {
        let hosted = try Hosted()
        let serverPort = try #require(URL(string: hosted.server.url)?.port)
        let relay = try Relay(to: serverPort)
        let relayed = "http://127.0.0.1:\(relay.port)/c/\(hosted.identifier)"
        // Stock git through the helper, and cohort clone: both refused, nothing cloned.
        let git = try hosted.git(["clone", relayed, hosted.temp.path("via-git").path], as: hosted.scenario.bo.home)
        #expect(git.status != 0)
        #expect(!FileManager.default.fileExists(atPath: hosted.temp.path("via-git/.git").path))
        let cloned = try hosted.cohort(["clone", relayed, hosted.temp.path("via-cohort").path], as: hosted.scenario.bo.home)
        #expect(cloned.status != 0)
        #expect(cloned.stderr.contains("E_NOT_PERMITTED"), "\(cloned.stderr)")
        let challenge = try run("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-H", "Content-Type: application/json",
                                         "--data", "{\"operation\":\"push\"}", relayed + "/challenge"], in: hosted.temp.url)
        #expect(challenge.stdout == "421")

        // A relay that names the server in Host: the challenges name the server, so the client, which
        // reached the relay, signs nothing.
        let hiding = try Relay(to: serverPort, rewritingHostTo: "127.0.0.1:\(serverPort)")
        let hidden = try hosted.cohort(["clone", "http://127.0.0.1:\(hiding.port)/c/\(hosted.identifier)", hosted.temp.path("via-hiding").path],
                                       as: hosted.scenario.bo.home)
        #expect(hidden.status != 0)
        #expect(hidden.stderr.contains("E_CHALLENGE_SCOPE") || hidden.stderr.contains("E_NETWORK"), "\(hidden.stderr)")
        #expect(!FileManager.default.fileExists(atPath: hosted.temp.path("via-hiding").path))
    }

    @Test("only requests that name this server are answered: another Host, or none, gets 421")
    func hostMustNameTheServer() throws {
        let hosted = try Hosted()
        let port = try #require(URL(string: hosted.server.url)?.port)
        func status(_ host: String?) throws -> String {
            let header = host.map { ["-H", "Host: \($0)"] } ?? ["-H", "Host:"]
            return try run("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}"] + header + [hosted.link], in: hosted.temp.url).stdout
        }
        #expect(try status("127.0.0.1:\(port)") == "200")
        #expect(try status("evil.example") == "421")
        #expect(try status("127.0.0.1:\(port + 1)") == "421")
        #expect(try status(nil) == "421")
    }

    @Test("off loopback, the server needs --public-url and says so before it starts")
    func publicURLRequiredOffLoopback() throws {
        let temp = try TemporaryDirectory()
        let result = try run(cohortBinary.path, ["serve", "--data", temp.path("data").path, "--listen", "0.0.0.0:0"], in: temp.url)
        #expect(result.status != 0)
        #expect(result.stderr.contains("E_MALFORMED") && result.stderr.contains("--public-url"), "\(result.stderr)")
    }
}
