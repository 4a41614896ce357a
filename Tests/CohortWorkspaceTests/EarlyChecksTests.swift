import CohortBase
import CohortCollaboration
@testable import CohortGit
import CohortIdentity
import CohortSync
import CohortTestSupport
@testable import CohortVerification
import CohortWorkspace
import Foundation
import Testing

/// A clone checks signatures while its pack is indexed: the indexer of the pack's copy (`PackTee`)
/// hands each commit and each blob that may be a notice, with its name, to another thread, where the
/// commit's signer and the notice's opening are computed ahead (`EarlyChecks`, `CheckedAhead`). It
/// must hand on each exactly as git reads it under exactly git's name, end cleanly on bytes it does
/// not take, and nothing computed ahead may change a verdict.
@Suite(.serialized) struct EarlyChecksTests {
    /// A history of signed commits and notices, repacked by git with deep deltas.
    private func history(commits: Int) throws -> Scenario {
        let scenario = try Scenario()
        for index in 0..<commits {
            try scenario.write("revision \(index)\n" + String(repeating: "butter and sugar\n", count: index % 9), to: "notes-\(index % 3).md", in: scenario.owner)
            _ = try #require(try scenario.owner.commitChanges(message: "revision \(index)"))
        }
        let repacked = try run("/usr/bin/git", ["repack", "-adfq", "--depth=50", "--window=50"], in: scenario.owner.directory)
        #expect(repacked.status == 0, "\(repacked.stderr)")
        return scenario
    }

    /// The one pack of the repository at `folder`.
    private func packFile(in folder: URL) throws -> URL {
        let packs = folder.appendingPathComponent(".git/objects/pack")
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: packs.path).first { $0.hasSuffix(".pack") })
        return packs.appendingPathComponent(name)
    }

    private func packBytes(in folder: URL) throws -> Data {
        try Data(contentsOf: packFile(in: folder))
    }

    /// Every commit, and every blob that starts like a JSON object, of the repository, by kind and
    /// name, as libgit2 reads them.
    private func commitsAndBlobs(in repository: Repository, folder: URL) throws -> [String] {
        let listed = try run("/usr/bin/git", ["cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)"], in: folder)
        return try listed.stdout.split(separator: "\n").compactMap { line -> String? in
            let parts = line.split(separator: " ")
            guard parts[1] == "commit" || parts[1] == "blob" else { return nil }
            let bytes = try repository.rawObject(ObjectID(hex: String(parts[0])), maxBytes: 1 << 20)
            guard parts[1] == "commit" || bytes.first == UInt8(ascii: "{") else { return nil }
            return "\(parts[1]) \(parts[0]) " + bytes.base64EncodedString()
        }.sorted()
    }

    /// What the copy hands on from `pack` given in pieces of `sizes` (in turn), to its end.
    private func handedOn(_ pack: Data, pieces sizes: [Int]) -> [String] {
        guard let tee = PackTee() else { return [] }
        var start = 0, turn = 0
        while start < pack.count {
            let end = min(pack.count, start + sizes[turn % sizes.count])
            tee.append(pack.subdata(in: start..<end))
            start = end
            turn += 1
        }
        tee.end()
        var objects: [String] = []
        while let object = tee.next({ kind, id, bytes in (kind == .commit ? "commit " : "blob ") + id.hex + " " + Data(bytes).base64EncodedString() }) {
            objects.append(object)
        }
        return objects.sorted()
    }

    @Test func theCopyHandsOnEveryCommitAndBlobAsGitReadsThem() throws {
        let scenario = try history(commits: 40)
        let folder = scenario.owner.directory
        let pack = try packBytes(in: folder)
        let expected = try commitsAndBlobs(in: scenario.owner.repository, folder: folder)
        #expect(expected.count > 80)
        let listed = try run("/usr/bin/git", ["verify-pack", "-v", packFile(in: folder).path], in: folder)
        let deltas = listed.stdout.split(separator: "\n").filter { $0.split(separator: " ", omittingEmptySubsequences: true).count == 7 }
        #expect(deltas.count > 40, "the pack holds deltas")
        // Whole, byte by byte, and in pieces that split headers and streams anywhere.
        for sizes in [[pack.count], [1], [7, 4093, 13], [65536]] {
            #expect(handedOn(pack, pieces: sizes) == expected, "pieces \(sizes)")
        }
    }

    /// Bytes the indexer does not take as git writes them end the handing on there, never anything
    /// worse: a cut pack, a damaged stream, a header that says more than the pack holds, no pack at all.
    @Test func bytesItDoesNotReadEndTheReadingCleanly() throws {
        let scenario = try history(commits: 8)
        let pack = try packBytes(in: scenario.owner.directory)
        let whole = handedOn(pack, pieces: [pack.count])
        #expect(!whole.isEmpty)
        for cut in [0, 5, 12, 13, pack.count / 3, pack.count - 21] {
            let part = handedOn(pack.prefix(cut), pieces: [977])
            #expect(part.count <= whole.count && Set(part).isSubset(of: Set(whole)), "cut at \(cut)")
        }
        for place in stride(from: 12, to: pack.count - 20, by: max(1, pack.count / 23)) {
            var damaged = pack
            damaged[place] ^= 0x5a
            _ = handedOn(damaged, pieces: [4096])
        }
        var huge = Data("PACK".utf8) + Data([0, 0, 0, 2, 0, 0, 0, 1])
        huge += Data([0xb0, 0xff, 0xff, 0xff, 0xff, 0x0f]) + Data(repeating: 0, count: 40)   // a blob of 16 GiB declared
        #expect(handedOn(huge, pieces: [5]).isEmpty)
        #expect(handedOn(Data("not a pack at all".utf8), pieces: [3]).isEmpty)
        // A reader stopped while it waits for bytes returns at once.
        let tee = try #require(PackTee())
        tee.append(pack.prefix(100))
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { tee.stop() }
        while tee.next({ _, _, _ in true }) != nil {}
        tee.forget()
    }

    /// A clone through a transport that sends a pack (file://): the signatures are checked ahead, the
    /// verification finds them, and the verdict is the one `cohort verify` gives, for a good history
    /// and for one carrying a commit that replays a good commit's signature over other bytes.
    @Test func aCloneFindsWhatWasCheckedAheadAndKeepsItsVerdict() throws {
        let scenario = try history(commits: 30)
        let owner = scenario.owner
        let commits = try owner.repository.commits(from: owner.head().commit).count
        let tee = try #require(PackTee())
        let early = EarlyChecks(reading: tee)
        let target = scenario.temp.path("early")
        let repository = try Repository.clone(from: "file://" + owner.directory.path, into: target, checkout: false, tee: tee)
        let kept = early.finish(readingAll: true)
        #expect(kept >= commits, "kept \(kept) of \(commits) commits and their notices")
        let before = CheckedAhead.hits.load(ordering: .relaxed)
        let tip = try #require(try repository.resolve("refs/remotes/origin/main"))
        let report = try withExtendedLifetime(early) { try repository.verifyHistory(to: tip) }
        #expect(report.commits == commits)
        #expect(CheckedAhead.hits.load(ordering: .relaxed) - before >= commits)

        // Bo takes Ann's last commit's signature and trailer onto other content: the clone refuses it
        // as `cohort verify` does, though the genuine commit's signer was computed ahead.
        let head = try owner.head().commit
        let genuine = try owner.repository.commit(head)
        let ann = try signer(owner.home, in: owner)
        let replayed = try forge(owner, signer: ann, files: ["notes-0.md": Data("changed\n".utf8)], message: "revision 29")
        try owner.repository.updateReference("refs/heads/main", to: head, expected: replayed, message: "back")
        let forgedRaw = try owner.repository.rawObject(replayed, maxBytes: 1 << 20)
        let armored = try #require(genuine.signature?.armored)
        let swapped = try #require(try CommitSignature.split(forgedRaw)).signedData
        let text = String(decoding: swapped, as: UTF8.self)
        let header = text.range(of: "\n\n").map { String(text[..<$0.lowerBound]) } ?? text
        let body = String(text.dropFirst(header.count))
        let raw = Data((header + "\ngpgsig " + armored.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\n ") + body).utf8)
        let bad = try Attacks.writeObject(raw, type: "commit", in: owner)
        try owner.repository.updateReference("refs/heads/main", to: bad, expected: head, message: "replayed signature")
        expectViolation(.badSignature, in: owner, at: bad)
        let refused = scenario.temp.path("refused")
        do {
            _ = try Workspace.clone(from: "file://" + owner.directory.path, into: refused, home: scenario.bo.home, callbacks: RemoteCallbacks())
            Issue.record("the clone took a commit whose signature is another commit's")
        } catch let error as CohortError {
            #expect(error.code == .badSignature, "\(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: refused.path))
    }

    /// A result computed ahead is handed out once and let go by the thread that takes it; asked for
    /// again, it is computed again, to the same answer.
    @Test func aResultIsHandedOutOnce() throws {
        let scenario = try history(commits: 2)
        let commit = try scenario.owner.repository.commit(scenario.owner.head().commit)
        CheckedAhead.begin()
        defer { CheckedAhead.end() }
        #expect(CheckedAhead.keepSigner(of: commit, CommitPreparation.checkedSigner) == true)
        let before = CheckedAhead.hits.load(ordering: .relaxed)
        let first = try CommitPreparation.signer(of: commit)
        let second = try CommitPreparation.signer(of: commit)
        #expect(first.root == second.root && first.key.x963 == second.key.x963)
        #expect(CheckedAhead.hits.load(ordering: .relaxed) - before == 1)
    }
}
