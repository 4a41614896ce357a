import CohortBase
@testable import CohortGit
import CohortSync
import CohortTestSupport
import CohortWorkspace
import Foundation
import Testing

/// A clone's pack is indexed by Cohort's own indexer (`PackIndexer.c`): whatever it writes must be
/// exactly what git and libgit2 write for the same pack, and anything it does not take (a pack git
/// would not write, or one past its bounds) must leave nothing behind and go to libgit2's indexer.
@Suite struct PackIndexerTests {
    /// A repository of many versions of a few documents, and packs git made of it: with deltas by
    /// offset, by id, and deep chains.
    private struct Packs {
        let temp: TemporaryDirectory
        let repository: URL
        /// Each pack's bytes with the index git wrote for it.
        let made: [(name: String, pack: Data, index: Data)]
    }

    private func packs() throws -> Packs {
        let temp = try TemporaryDirectory()
        let repository = temp.path("repository")
        try FileManager.default.createDirectory(at: repository, withIntermediateDirectories: true)
        #expect(try run("git", ["init", "-q"], in: repository).status == 0)
        for version in 0..<60 {
            for document in 0..<3 {
                let text = (0...version).map { "line \($0) of \(document): " + String(repeating: "flour ", count: ($0 * 7 + document) % 11) }
                try text.joined(separator: "\n").write(to: repository.appendingPathComponent("doc-\(document).md"), atomically: true, encoding: .utf8)
            }
            if version % 10 == 0 { try Data((0..<3000).map { UInt8(($0 * 31 + version) % 251) }).write(to: repository.appendingPathComponent("data-\(version).bin")) }
            #expect(try run("git", ["add", "-A"], in: repository).status == 0)
            #expect(try run("git", ["-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "v\(version)"], in: repository).status == 0)
        }
        let objects = try run("git", ["rev-list", "--objects", "--all"], in: repository).stdout
        var made: [(String, Data, Data)] = []
        for (name, options) in [("offsets", ["--delta-base-offset"]), ("ids", []), ("deep", ["--delta-base-offset", "--depth=200", "--window=100"]),
                                ("none", ["--depth=0"])] {
            let base = temp.path("made-\(name)").path
            let written = try run("git", ["pack-objects", "-q"] + options + [base], in: repository, stdin: Data(objects.utf8))
            #expect(written.status == 0, "\(written.stderr)")
            let hash = written.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            made.append((name, try Data(contentsOf: URL(fileURLWithPath: "\(base)-\(hash).pack")), try Data(contentsOf: URL(fileURLWithPath: "\(base)-\(hash).idx"))))
        }
        return Packs(temp: temp, repository: repository, made: made)
    }

    private func folder(_ temp: TemporaryDirectory, _ name: String) throws -> URL {
        let folder = temp.path(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test func writesTheIndexGitWritesInAnyPieces() throws {
        let packs = try packs()
        for made in packs.made {
            for piece in [0, 1, 7, 4096] {
                let folder = try folder(packs.temp, "ours-\(made.name)-\(piece)")
                #expect(PackIndexer.index(made.pack, into: folder, piece: piece) == .written, "\(made.name) in pieces of \(piece)")
                let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
                let name = try #require(files.first { $0.hasSuffix(".idx") }).dropLast(4)
                #expect(files == ["\(name).idx", "\(name).pack"], "\(files)")
                #expect(try Data(contentsOf: folder.appendingPathComponent("\(name).idx")) == made.index, "\(made.name) in pieces of \(piece)")
                #expect(try Data(contentsOf: folder.appendingPathComponent("\(name).pack")) == made.pack)
                let mode = try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent("\(name).idx").path)[.posixPermissions] as? Int
                #expect(mode == 0o444)
            }
            // libgit2's indexer, as fetches used it before, names the same pack.
            let theirs = try folder(packs.temp, "libgit2-\(made.name)")
            let name = try #require(PackIndexer.indexWithLibgit2(made.pack, into: theirs))
            #expect(try Data(contentsOf: theirs.appendingPathComponent("pack-\(name).idx")) == made.index)
        }
    }

    /// Packs a server could send that git never writes, each built byte by byte: the indexer writes
    /// nothing and leaves them to libgit2 (which refuses each of these too).
    @Test func declinesWhatGitDoesNotWrite() throws {
        let temp = try TemporaryDirectory()
        let script = #"""
        import hashlib, os, sys, zlib
        def header(kind, size):
            out = bytearray(); byte = (kind << 4) | (size & 15); size >>= 4
            while size: out.append(byte | 0x80); byte = size & 0x7f; size >>= 7
            out.append(byte); return bytes(out)
        def entry(kind, body, declared=None, extra=b''):
            return header(kind, len(body) if declared is None else declared) + extra + zlib.compress(body)
        def delta(base_size, result):
            def size(n):
                out = bytearray()
                while True:
                    b = n & 0x7f; n >>= 7
                    if n: out.append(b | 0x80)
                    else: out.append(b); return bytes(out)
            return size(base_size) + size(len(result)) + bytes([len(result)]) + result
        def pack(entries, count=None, trailer=None, tail=b'', version=2):
            body = b'PACK' + version.to_bytes(4, 'big') + (len(entries) if count is None else count).to_bytes(4, 'big') + b''.join(entries)
            return body + (trailer or hashlib.sha1(body).digest()) + tail
        blob = entry(3, b'flour and water\n')
        name = lambda kind, body: hashlib.sha1(b'%s %d\0' % (kind, len(body)) + body).digest()
        made = {
            'twice': pack([blob, blob]),
            'missing-base': pack([entry(7, delta(4, b'abc'), extra=os.urandom(20))]),
            'ring': pack([entry(7, delta(3, b'xyz'), extra=name(b'blob', b'abc')), entry(7, delta(3, b'abc'), extra=name(b'blob', b'xyz'))]),
            'short-object': pack([entry(3, b'flour', declared=9)]),
            'long-object': pack([entry(3, b'flour and water', declared=5)]),
            'delta-base-size': pack([blob, header(6, len(delta(99, b'xy'))) + bytes([len(blob)]) + zlib.compress(delta(99, b'xy'))]),
            'count': pack([blob], count=2),
            'trailer': pack([blob], trailer=bytes(20)),
            'after-trailer': pack([blob], tail=b'\0'),
            'kind-5': pack([entry(5, b'flour')]),
            'no-entries': pack([]),
            'version': b'PACK' + (4).to_bytes(4, 'big') + (1).to_bytes(4, 'big') + blob,
            # Version 3, which git reads and libgit2 1.5.1 does not.
            'version-3': pack([blob], version=3),
            'cut': pack([blob, blob])[:40],
            # Deltas by id on 3,000 bases no pack holds, their names alike in their first 12 bytes:
            # found in a sorted list, they cost no more than any others.
            'crowded': pack([entry(7, delta(4, b'abc'), extra=bytes(12) + i.to_bytes(8, 'big')) for i in range(3000)]),
        }
        for key, value in made.items(): open(os.path.join(sys.argv[1], key + '.pack'), 'wb').write(value)
        """#
        let packs = try folder(temp, "packs")
        let written = try run("python3", ["-c", script, packs.path], in: temp.url)
        #expect(written.status == 0, "\(written.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: packs.path).sorted()
        #expect(names.count == 15)
        for name in names {
            let bytes = try Data(contentsOf: packs.appendingPathComponent(name))
            for piece in [0, 3] {
                let folder = try folder(temp, "ours-\(name)-\(piece)")
                #expect(PackIndexer.index(bytes, into: folder, piece: piece) == .declined, "\(name)")
                #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty, "\(name) left files")
            }
        }
        // libgit2 refuses these as well. What it makes of an object whose stream is not the size its
        // header says, of the kind git never uses (libgit2 1.5.1 indexes it), or of a pack of no
        // objects, is libgit2's to decide: the clone hands it every byte.
        for name in names where !["long-object.pack", "short-object.pack", "kind-5.pack", "no-entries.pack"].contains(name) {
            let bytes = try Data(contentsOf: packs.appendingPathComponent(name))
            #expect(PackIndexer.indexWithLibgit2(bytes, into: try folder(temp, "libgit2-\(name)")) == nil, "libgit2 took \(name)")
        }
    }

    /// A clone whose pack the indexer declines (an object past its bound) still gets that pack
    /// indexed, by libgit2, from every byte the copy holds.
    @Test func aDeclinedPackGoesToLibgit2() throws {
        let temp = try TemporaryDirectory()
        let origin = temp.path("origin")
        try FileManager.default.createDirectory(at: origin, withIntermediateDirectories: true)
        #expect(try run("git", ["init", "-q"], in: origin).status == 0)
        // 65 MiB that do not compress, past the 64 MiB the indexer takes in one object.
        var generator = SystemRandomNumberGenerator()
        let large = Data((0..<(65 << 17)).flatMap { _ in withUnsafeBytes(of: generator.next() as UInt64) { Array($0) } })
        try large.write(to: origin.appendingPathComponent("large.bin"))
        try "small\n".write(to: origin.appendingPathComponent("small.txt"), atomically: true, encoding: .utf8)
        #expect(try run("git", ["add", "-A"], in: origin).status == 0)
        #expect(try run("git", ["-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "large"], in: origin).status == 0)
        let tee = try #require(PackTee())
        let clone = temp.path("clone")
        _ = try Repository.clone(from: "file://" + origin.path, into: clone, tee: tee)
        tee.forget()
        let checked = try run("git", ["fsck", "--full"], in: clone)
        #expect(checked.status == 0, "\(checked.stderr)")
        #expect(try Data(contentsOf: clone.appendingPathComponent("large.bin")) == large)
    }

    /// A clone whose pack stops arriving half-way (a server that hangs up mid-transfer: the stand-in
    /// sends half of `git upload-pack`'s answer) fails, and leaves no pack behind; the same server's
    /// whole answer then clones.
    @Test func aClonePackCutOffFailsAndWritesNothing() throws {
        let temp = try TemporaryDirectory()
        let origin = temp.path("origin.git")
        try FileManager.default.createDirectory(at: origin, withIntermediateDirectories: true)
        let work = temp.path("work")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        #expect(try run("git", ["init", "-q", "--bare", origin.path], in: temp.url).status == 0)
        #expect(try run("git", ["init", "-q"], in: work).status == 0)
        for version in 0..<40 {
            try (0...version).map { "line \($0)\n" }.joined().write(to: work.appendingPathComponent("doc.md"), atomically: true, encoding: .utf8)
            #expect(try run("git", ["add", "-A"], in: work).status == 0)
            #expect(try run("git", ["-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "v\(version)"], in: work).status == 0)
        }
        #expect(try run("git", ["push", "-q", origin.path, "HEAD:refs/heads/main"], in: work).status == 0)
        let server = try SmartHTTPStandIn(serving: temp.url, in: temp)
        server.cutsPacks = true
        let url = server.url + "/origin.git"

        let cut = temp.path("cut")
        let tee = try #require(PackTee())
        #expect(throws: (any Error).self) { try Repository.clone(from: url, into: cut, checkout: false, tee: tee) }
        tee.forget()
        let packs = cut.appendingPathComponent(".git/objects/pack")
        #expect((try? FileManager.default.contentsOfDirectory(atPath: packs.path))?.isEmpty ?? true, "a cut-off clone left a pack")

        server.cutsPacks = false
        let whole = temp.path("whole")
        let again = try #require(PackTee())
        _ = try Repository.clone(from: url, into: whole, tee: again)
        again.forget()
        let checked = try run("git", ["fsck", "--full"], in: whole)
        #expect(checked.status == 0, "\(checked.stderr)")
    }

    /// A collaboration cloned over file:// (libgit2 makes its pack with deltas by id): the index the
    /// clone wrote is git's, and git finds the repository whole.
    @Test func aCloneWritesGitsIndex() throws {
        let scenario = try Scenario()
        for index in 0..<20 {
            try scenario.write("revision \(index)\n", to: "notes-\(index % 3).md", in: scenario.owner)
            _ = try #require(try scenario.owner.commitChanges(message: "revision \(index)"))
        }
        let history = try scenario.owner.repository.commits(from: scenario.owner.head().commit).count
        let clone = scenario.temp.path("clone")
        let outcome = try Workspace.clone(from: "file://" + scenario.owner.directory.path, into: clone, home: scenario.bo.home, callbacks: RemoteCallbacks())
        #expect(outcome.report.commits == history)
        let packs = clone.appendingPathComponent(".git/objects/pack")
        let names = try FileManager.default.contentsOfDirectory(atPath: packs.path)
        let pack = try #require(names.first { $0.hasSuffix(".pack") })
        let rebuilt = scenario.temp.path("rebuilt.idx")
        #expect(try run("git", ["index-pack", "-o", rebuilt.path, packs.appendingPathComponent(pack).path], in: clone).status == 0)
        #expect(try Data(contentsOf: rebuilt) == Data(contentsOf: packs.appendingPathComponent(String(pack.dropLast(5)) + ".idx")))
        let checked = try run("git", ["fsck", "--full"], in: clone)
        #expect(checked.status == 0, "\(checked.stderr)")
    }
}
