import CGit2
import CohortBase
@testable import CohortGit
import CohortTestSupport
import Foundation
import Testing

/// A verification worker's handle reads packs through a reader of its own (`cohort_pack_reader_new`),
/// and reads every object as a plain handle does, packed or loose, whole or as deltas, and refuses
/// exactly what libgit2 refuses.
@Suite struct OwnPacksTests {
    @Test func aHandleWithPacksOfItsOwnReadsEveryObjectAsAPlainOne() throws {
        let scenario = try Scenario()
        let folder = try #require(scenario.owner.repository.workingDirectory)
        try scenario.write("600 g flour\n", to: "bread/sourdough.md", in: scenario.owner)
        _ = try #require(try scenario.owner.commitChanges(message: "flour"))
        let repack = try run("/usr/bin/git", ["repack", "-adq"], in: folder)
        #expect(repack.status == 0, "\(repack.stderr)")
        let origin = Repository.Origin.path(folder)
        let plain = try Repository.reopen(origin)
        // One object only loose, written after the repack.
        let loose = try plain.writeBlob(Data("only loose\n".utf8))
        let own = try Repository.reopen(origin, ownPacks: true)
        #expect(try backends(own) == backends(plain) + 1)

        let listed = try run("/usr/bin/git", ["cat-file", "--batch-all-objects", "--batch-check=%(objectname)"], in: folder)
        let ids = try listed.stdout.split(separator: "\n").map { try ObjectID(hex: String($0)) }
        #expect(ids.count > 20 && ids.contains(loose))
        for id in ids {
            #expect(try own.rawObject(id, maxBytes: 1 << 20) == plain.rawObject(id, maxBytes: 1 << 20), "\(id.hex)")
        }
        // The reads above went through a reader of the handle's own: the pack's index is mapped twice
        // (the kernel names both by the file's one path), once for each handle.
        try withExtendedLifetime((own, plain)) {
            let maps = String(decoding: try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/self/maps")).readToEnd() ?? Data(), as: UTF8.self)
            let index = folder.appendingPathComponent(".git/objects/pack").path
            #expect(maps.split(separator: "\n").filter { $0.contains(index) && $0.hasSuffix(".idx") }.count == 2)
        }
    }

    /// A hook's handle (opened from git's environment) reads the quarantine's packs and the
    /// repository's own through a reader of its own, the quarantine's first; other alternates (which
    /// libgit2 reads last) are left as they are.
    @Test func aHooksHandleOwnsTheQuarantinesPacksAndTheRepositorys() {
        let environment = ["GIT_OBJECT_DIRECTORY": "/srv/r.git/objects/tmp_objdir-incoming-x",
                           "GIT_ALTERNATE_OBJECT_DIRECTORIES": "/srv/r.git/objects:/elsewhere/objects"]
        #expect(Repository.ownPackFolders(origin: .environment, commonDirectory: "/srv/r.git/", environment: environment)
            == ["/srv/r.git/objects/tmp_objdir-incoming-x", "/srv/r.git/objects"])
        #expect(Repository.ownPackFolders(origin: .environment, commonDirectory: "/srv/r.git/", environment: [:]) == ["/srv/r.git/objects"])
        #expect(Repository.ownPackFolders(origin: .path(URL(fileURLWithPath: "/srv/r.git")), commonDirectory: "/srv/r.git",
                                          environment: environment) == ["/srv/r.git/objects"])
    }

    /// Deltas by offset, deltas by id, and an index whose offsets all sit in its 64-bit table: the
    /// handle's own reader serves every object, in any order, byte for byte and with the same header
    /// as libgit2. Its packs are moved away before the reads, so libgit2's own pack reader (which opens
    /// a pack's index only when first asked) could serve none of them.
    @Test(arguments: ["offset", "id", "large offsets"])
    func theReaderServesEveryDeltaItself(_ packing: String) throws {
        let directory = try TemporaryDirectory()
        let folder = try deltifiedRepository(in: directory, packing: packing)
        let ids = try objectIDs(in: folder)
        var expected: [ObjectID: Data] = [:]
        var headers: [ObjectID: Int] = [:]
        do {
            // Freed before the packs move: libgit2 shares an open pack between all its handles.
            let plain = try Repository.reopen(.path(folder))
            for id in ids {
                expected[id] = try plain.rawObject(id, maxBytes: 1 << 20)
                headers[id] = try plain.objectHeader(id).size
            }
        }
        let own = try Repository.reopen(.path(folder), ownPacks: true)
        let packs = folder.appendingPathComponent(".git/objects/pack")
        try FileManager.default.moveItem(at: packs, to: folder.appendingPathComponent(".git/objects/moved-away"))
        for id in ids.reversed() + ids {
            #expect(try own.objectHeader(id).size == headers[id], "\(id.hex)")
            #expect(try own.rawObject(id, maxBytes: 1 << 20) == expected[id], "\(id.hex)")
        }
    }

    /// A pack damaged anywhere (one byte flipped at 48 places in turn, and in its index): the handle
    /// with its own reader reads, or fails to read, each object exactly as a plain handle does.
    @Test func aDamagedPackReadsAsLibgit2ReadsIt() throws {
        let directory = try TemporaryDirectory()
        let folder = try deltifiedRepository(in: directory, packing: "offset")
        let ids = try objectIDs(in: folder)
        let packs = folder.appendingPathComponent(".git/objects/pack")
        let names = try FileManager.default.contentsOfDirectory(atPath: packs.path)
        let pack = packs.appendingPathComponent(try #require(names.first { $0.hasSuffix(".pack") }))
        let index = packs.appendingPathComponent(try #require(names.first { $0.hasSuffix(".idx") }))
        let original = (pack: try Data(contentsOf: pack), index: try Data(contentsOf: index))
        var damages = (0..<48).map { (file: pack, offset: 12 + (original.pack.count - 32) * $0 / 48) }
        damages += [8, 8 + 4 * 200, 8 + 1024 + 5, original.index.count - 30].map { (file: index, offset: $0) }
        var refused = 0
        for damage in damages {
            try original.pack.write(to: pack)
            try original.index.write(to: index)
            var bytes = try Data(contentsOf: damage.file)
            bytes[damage.offset] ^= 0x5a
            try bytes.write(to: damage.file)
            let plain = try Repository.reopen(.path(folder))
            let own = try Repository.reopen(.path(folder), ownPacks: true)
            for id in ids {
                let read = (plain: try? plain.rawObject(id, maxBytes: 1 << 20), own: try? own.rawObject(id, maxBytes: 1 << 20))
                #expect(read.own == read.plain, "\(id.hex), byte \(damage.offset) of \(damage.file.lastPathComponent)")
                if read.plain == nil { refused += 1 }
            }
        }
        #expect(refused > 0)
    }

    /// A pack built so that reading a small blob means inflating a huge base again (a delta by offset
    /// on a 72 MiB blob that copies nothing from it): the reader serves the base itself, and leaves the
    /// small blob to libgit2 rather than spend 72 MiB on every read of it (with its packs moved away,
    /// libgit2 cannot read it, and neither can the handle).
    @Test func aSmallDeltaOnAHugeBaseIsLeftToLibgit2() throws {
        let directory = try TemporaryDirectory()
        let folder = directory.path("huge")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        #expect(try run("/usr/bin/git", ["init", "-q", "--bare"], in: folder).status == 0)
        let packs = folder.appendingPathComponent("objects/pack")
        let pack = packs.appendingPathComponent("pack-built.pack")
        // Entry one: the blob, whole. Entry two: a delta on it by offset, inserting 14 bytes.
        let script = """
        import hashlib, sys, zlib
        def header(kind, size):
            out = bytearray([(kind << 4) | (size & 15)]); size >>= 4
            while size:
                out[-1] |= 0x80; out.append(size & 0x7f); size >>= 7
            return bytes(out)
        def varint(n):
            out = bytearray()
            while True:
                out.append((n & 0x7f) | (0x80 if n > 0x7f else 0)); n >>= 7
                if not n: return bytes(out)
        base = b"a" * (72 << 20)
        first = header(3, len(base)) + zlib.compress(base)
        small = b"only inserted\\n"
        delta = varint(len(base)) + varint(len(small)) + bytes([len(small)]) + small
        d = len(first); distance = bytearray([d & 0x7f]); d >>= 7
        while d:
            d -= 1; distance.insert(0, 0x80 | (d & 0x7f)); d >>= 7
        second = header(6, len(delta)) + bytes(distance) + zlib.compress(delta)
        body = b"PACK" + (2).to_bytes(4, "big") + (2).to_bytes(4, "big") + first + second
        open(sys.argv[1], "wb").write(body + hashlib.sha1(body).digest())
        """
        let built = try run("/usr/bin/python3", ["-c", script, pack.path], in: folder)
        #expect(built.status == 0, "\(built.stderr)")
        let indexed = try run("/usr/bin/git", ["index-pack", pack.path], in: folder)
        #expect(indexed.status == 0, "\(indexed.stderr)")
        let ids = try run("/usr/bin/git", ["cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objectsize)"], in: folder)
            .stdout.split(separator: "\n").map { $0.split(separator: " ") }
        let huge = try ObjectID(hex: String(try #require(ids.first { $0[1] != "14" })[0]))
        let small = try ObjectID(hex: String(try #require(ids.first { $0[1] == "14" })[0]))
        let own = try Repository.reopen(.path(folder), ownPacks: true)
        try FileManager.default.moveItem(at: packs, to: folder.appendingPathComponent("objects/moved-away"))
        #expect(try own.rawObject(huge, maxBytes: 1 << 30).count == 72 << 20)
        #expect(throws: CohortError.self) { try own.rawObject(small, maxBytes: 1 << 20) }
    }

    /// Deflate streams zlib refuses, though their checksum and size are right (a length symbol 286, a
    /// one-symbol code's unused bit, 32 distance codes declared): libgit2 cannot read such a blob, and
    /// neither may the reader (libdeflate, for one, would decode all three). git's indexer refuses them,
    /// so the index is written by the test.
    @Test func aStreamZlibRefusesIsRefusedByTheReader() throws {
        let directory = try TemporaryDirectory()
        let folder = directory.path("odd")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        #expect(try run("/usr/bin/git", ["init", "-q", "--bare"], in: folder).status == 0)
        let script = #"""
        import hashlib, struct, sys, zlib
        class Bits:
            def __init__(self): self.bits = []
            def put(self, value, count):        # least significant bit first
                self.bits += [(value >> i) & 1 for i in range(count)]
            def code(self, value, count):       # a Huffman code, most significant bit first
                self.bits += [(value >> i) & 1 for i in reversed(range(count))]
            def bytes(self):
                bits = self.bits + [0] * (-len(self.bits) % 8)
                return bytes(sum(bits[i + j] << j for j in range(8)) for i in range(0, len(bits), 8))
        def fixed(bits, symbol):
            if symbol < 144: bits.code(0x30 + symbol, 8)
            elif symbol < 256: bits.code(0x190 + symbol - 144, 9)
            elif symbol < 280: bits.code(symbol - 256, 7)
            else: bits.code(0xc0 + symbol - 280, 8)
        def stored(data):
            bits = Bits(); bits.put(0, 1); bits.put(0, 2)
            return bits.bytes() + struct.pack("<HH", len(data), 0xffff ^ len(data)) + data
        def wrapped(deflate, data): return b"\x78\x9c" + deflate + struct.pack(">I", zlib.adler32(data))
        order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]
        def only_end_of_block(distances, last_bit):
            bits = Bits(); bits.put(1, 1); bits.put(2, 2); bits.put(0, 5); bits.put(distances - 1, 5); bits.put(15, 4)
            for symbol in order: bits.put({0: 1, 1: 2, 18: 2}.get(symbol, 0), 3)
            bits.code(3, 2); bits.put(127, 7); bits.code(3, 2); bits.put(107, 7); bits.code(2, 2)
            if distances == 1: bits.code(0, 1)
            else: bits.code(3, 2); bits.put(distances - 11, 7)
            bits.code(last_bit, 1)
            return bits.bytes()
        blobs = []
        bits = Bits(); bits.put(1, 1); bits.put(1, 2); fixed(bits, ord("a")); fixed(bits, 286); bits.code(0, 5); fixed(bits, 256)
        blobs.append((b"a" * 259, wrapped(bits.bytes(), b"a" * 259)))
        blobs.append((b"hello", wrapped(stored(b"hello") + only_end_of_block(1, 1), b"hello")))
        blobs.append((b"hullo", wrapped(stored(b"hullo") + only_end_of_block(32, 0), b"hullo")))
        blobs.append((b"plain", zlib.compress(b"plain")))
        body = b"PACK" + struct.pack(">II", 2, len(blobs))
        entries = []
        for data, stream in blobs:
            oid = hashlib.sha1(b"blob %d\0" % len(data) + data).digest()
            entry = bytes([0x30 | len(data) & 15] + ([len(data) >> 4] if len(data) > 15 else []))
            if len(data) > 15: entry = bytes([entry[0] | 0x80]) + entry[1:]
            entries.append((oid, zlib.crc32(entry + stream), len(body)))
            body += entry + stream
        pack = body + hashlib.sha1(body).digest()
        entries.sort()
        fanout = [sum(1 for e in entries if e[0][0] <= b) for b in range(256)]
        index = b"\xfftOc" + struct.pack(">I", 2) + b"".join(struct.pack(">I", f) for f in fanout)
        index += b"".join(e[0] for e in entries) + b"".join(struct.pack(">I", e[1]) for e in entries)
        index += b"".join(struct.pack(">I", e[2]) for e in entries) + pack[-20:]
        index += hashlib.sha1(index).digest()
        name = sys.argv[1] + "/pack-" + pack[-20:].hex()
        open(name + ".pack", "wb").write(pack)
        open(name + ".idx", "wb").write(index)
        for data, _ in blobs: print(hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest())
        """#
        let built = try run("/usr/bin/python3", ["-c", script, folder.appendingPathComponent("objects/pack").path], in: folder)
        #expect(built.status == 0, "\(built.stderr)")
        let ids = try built.stdout.split(separator: "\n").map { try ObjectID(hex: String($0)) }
        try #require(ids.count == 4)
        let plain = try Repository.reopen(.path(folder))
        let own = try Repository.reopen(.path(folder), ownPacks: true)
        for id in ids.prefix(3) {
            #expect(throws: CohortError.self, "libgit2 refuses \(id.hex)") { try plain.rawObject(id, maxBytes: 1 << 20) }
            #expect(throws: CohortError.self, "the reader refuses \(id.hex)") { try own.rawObject(id, maxBytes: 1 << 20) }
        }
        #expect(try own.rawObject(ids[3], maxBytes: 1 << 20) == Data("plain".utf8))
        #expect(try plain.rawObject(ids[3], maxBytes: 1 << 20) == Data("plain".utf8))
    }

    /// Trees kept between handles, as a resident verifier keeps them (`GitRuntime.keepTrees`, handles
    /// opened `keepingTrees`; others, as in the tests above, neither read nor keep them): a later
    /// handle reads every object as a plain handle does, trees and the bases of deltas by id coming
    /// from what an earlier one kept. And no repository is served another's trees: in a copy whose
    /// index is forged (two trees' places swapped, so that one id names the other's bytes), every
    /// object reads, with the original's trees kept, exactly as libgit2 reads it there.
    @Test func keptTreesServeOnlyTheRepositoryTheyCameFrom() throws {
        GitRuntime.keepTrees(bytes: 32 << 20)
        let directory = try TemporaryDirectory()
        let original = try deltifiedRepository(in: directory, packing: "id")
        let ids = try objectIDs(in: original)
        let kinds = try run("/usr/bin/git", ["cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype) %(deltabase)"], in: original)
        let treeLines = kinds.stdout.split(separator: "\n").filter { $0.contains(" tree ") }
        let trees = try treeLines.map { try ObjectID(hex: String($0.prefix(40))) }
        // Trees stored whole: a read of one goes to the kept trees before the pack (a delta is read
        // whole once for its header, and that read is what the handle is given).
        let whole = try treeLines.filter { $0.hasSuffix(" " + String(repeating: "0", count: 40)) }.map { try ObjectID(hex: String($0.prefix(40))) }
        #expect(trees.count > 100 && whole.count >= 2)
        var expected: [ObjectID: Data] = [:]
        do {
            let plain = try Repository.reopen(.path(original))
            for id in ids { expected[id] = try plain.rawObject(id, maxBytes: 1 << 20) }
        }
        do {
            let first = try Repository.reopen(.path(original), ownPacks: true, keepingTrees: true)
            for id in ids { _ = try first.rawObject(id, maxBytes: 1 << 20) }
        }
        let before = GitRuntime.keptTrees.reads
        let second = try Repository.reopen(.path(original), ownPacks: true, keepingTrees: true)
        for id in ids.reversed() {
            #expect(try second.rawObject(id, maxBytes: 1 << 20) == expected[id], "\(id.hex)")
        }
        #expect(GitRuntime.keptTrees.reads >= before + trees.count, "the second handle read its trees from the kept ones")

        // The copy, its index forged: two trees stored whole, of different sizes, swap places.
        let copy = directory.path("forged")
        try FileManager.default.copyItem(at: original, to: copy)
        let packs = copy.appendingPathComponent(".git/objects/pack")
        let indexName = try #require(try FileManager.default.contentsOfDirectory(atPath: packs.path).first { $0.hasSuffix(".idx") })
        let index = packs.appendingPathComponent(indexName)
        var forged = try Data(contentsOf: index)
        let count = Int(forged[8 + 255 * 4]) << 24 | Int(forged[8 + 255 * 4 + 1]) << 16 | Int(forged[8 + 255 * 4 + 2]) << 8 | Int(forged[8 + 255 * 4 + 3])
        let listed = (0..<count).map { forged.subdata(in: (8 + 1024 + 20 * $0)..<(8 + 1024 + 20 * $0 + 20)) }
        let first = try #require(whole.first)
        let other = try #require(whole.first { expected[$0]?.count != expected[first]?.count })
        let places = try [first, other].map { id in try #require(listed.firstIndex(of: bytes(of: id))) }
        for table in [8 + 1024 + 20 * count, 8 + 1024 + 24 * count] {   // CRCs, then offsets
            let (a, b) = (table + 4 * places[0], table + 4 * places[1])
            let swapped = (forged.subdata(in: b..<(b + 4)), forged.subdata(in: a..<(a + 4)))
            forged.replaceSubrange(a..<(a + 4), with: swapped.0)
            forged.replaceSubrange(b..<(b + 4), with: swapped.1)
        }
        let body = directory.path("index-body")
        try forged.prefix(forged.count - 20).write(to: body)
        let digest = try run("/usr/bin/sha1sum", [body.path], in: directory.url).stdout.prefix(40)
        forged.replaceSubrange((forged.count - 20)..<forged.count, with: bytes(of: try ObjectID(hex: String(digest))))
        #expect(chmod(index.path, 0o644) == 0)
        try forged.write(to: index)

        let plainCopy = try Repository.reopen(.path(copy))
        #expect(try plainCopy.rawObject(first, maxBytes: 1 << 20) == expected[other], "the forged index names the other tree's bytes")
        for _ in 0..<2 {
            let ownCopy = try Repository.reopen(.path(copy), ownPacks: true, keepingTrees: true)
            for id in ids {
                #expect((try? ownCopy.rawObject(id, maxBytes: 1 << 20)) == (try? plainCopy.rawObject(id, maxBytes: 1 << 20)), "\(id.hex)")
            }
        }
        // What the forged index made the copy read was never kept as those trees (a tree is kept
        // only once its bytes hash to its id): with its index repaired, the copy reads its own again,
        // and the original reads its own through kept trees.
        try FileManager.default.removeItem(at: index)
        try FileManager.default.copyItem(at: original.appendingPathComponent(".git/objects/pack/\(indexName)"), to: index)
        for folder in [copy, original] {
            let repaired = try Repository.reopen(.path(folder), ownPacks: true, keepingTrees: true)
            for id in [first, other] {
                #expect(try repaired.rawObject(id, maxBytes: 1 << 20) == expected[id], "\(id.hex) in \(folder.lastPathComponent)")
            }
        }

        // Nothing kept is read for an id the repository's packs no longer list.
        let emptied = directory.path("emptied")
        try FileManager.default.copyItem(at: original, to: emptied)
        do {
            let reading = try Repository.reopen(.path(emptied), ownPacks: true, keepingTrees: true)
            for id in trees { _ = try reading.rawObject(id, maxBytes: 1 << 20) }
        }
        try FileManager.default.removeItem(at: emptied.appendingPathComponent(".git/objects/pack"))
        let after = try Repository.reopen(.path(emptied), ownPacks: true, keepingTrees: true)
        for id in trees.prefix(20) {
            #expect(throws: CohortError.self, "\(id.hex)") { try after.rawObject(id, maxBytes: 1 << 20) }
        }
    }

    /// 60 versions of two documents, committed by git alone and repacked so that most trees and blobs
    /// are deltas: by offset, by id, or by offset with every offset in the index's 64-bit table.
    private func deltifiedRepository(in directory: TemporaryDirectory, packing: String) throws -> URL {
        let folder = directory.path("deltas")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        #expect(try run("/usr/bin/git", ["init", "-q", "-b", "main"], in: folder).status == 0)
        var stream = ""
        var lines: [String] = []
        for version in 0..<60 {
            lines.append("line \(version): \(String(repeating: "flour and water ", count: version % 7 + 1))")
            let first = lines.joined(separator: "\n") + "\n"
            let second = lines.reversed().joined(separator: "\n") + "\n"
            let message = "version \(version)\n"
            stream += "commit refs/heads/main\ncommitter Ann <ann@example.com> \(1_700_000_000 + version) +0000\n"
            stream += "data \(message.utf8.count)\n\(message)"
            stream += "M 100644 inline docs/bread.md\ndata \(first.utf8.count)\n\(first)"
            stream += "M 100644 inline notes/cake.md\ndata \(second.utf8.count)\n\(second)\n"
        }
        let imported = try run("/usr/bin/git", ["fast-import", "--quiet"], in: folder, stdin: Data(stream.utf8))
        #expect(imported.status == 0, "\(imported.stderr)")
        let byOffset = packing == "id" ? "false" : "true"
        let repacked = try run("/usr/bin/git", ["-c", "repack.useDeltaBaseOffset=\(byOffset)", "repack", "-adfq", "--depth=20"], in: folder)
        #expect(repacked.status == 0, "\(repacked.stderr)")
        let packs = folder.appendingPathComponent(".git/objects/pack")
        let pack = try #require(try FileManager.default.contentsOfDirectory(atPath: packs.path).first { $0.hasSuffix(".pack") })
        if packing == "large offsets" {
            let index = packs.appendingPathComponent(pack.replacingOccurrences(of: ".pack", with: ".idx"))
            try FileManager.default.removeItem(at: index)
            let indexed = try run("/usr/bin/git", ["index-pack", "--index-version=2,0x20", "-o", index.path, packs.appendingPathComponent(pack).path], in: folder)
            #expect(indexed.status == 0, "\(indexed.stderr)")
        }
        let listed = try run("/usr/bin/git", ["verify-pack", "-v", packs.appendingPathComponent(pack).path], in: folder)
        let deltas = listed.stdout.split(separator: "\n").filter { $0.split(separator: " ", omittingEmptySubsequences: true).count == 7 }
        #expect(deltas.count > 100, "\(listed.stdout)")
        return folder
    }

    private func bytes(of id: ObjectID) -> Data {
        withUnsafeBytes(of: id.raw.id) { Data($0) }
    }

    private func objectIDs(in folder: URL) throws -> [ObjectID] {
        let listed = try run("/usr/bin/git", ["cat-file", "--batch-all-objects", "--batch-check=%(objectname)"], in: folder)
        return try listed.stdout.split(separator: "\n").map { try ObjectID(hex: String($0)) }
    }

    private func backends(_ repository: Repository) throws -> Int {
        var odb: OpaquePointer?
        try #require(git_repository_odb(&odb, repository.pointer) == 0)
        defer { git_odb_free(odb) }
        return Int(git_odb_num_backends(odb))
    }
}
