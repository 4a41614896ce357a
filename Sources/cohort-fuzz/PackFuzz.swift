import CohortGit
import Foundation

/// The `pack` target: a genuine pack of deltas, made once per process by git, damaged as the input
/// says (five bytes per damage: a little-endian place in the pack and a byte to xor there; at most
/// eight), then every object's header and content read through Cohort's pack reader and through
/// libgit2's alone. The two must agree, error for error, and on the header of every object that reads;
/// and the pack is indexed by Cohort's indexer of a clone's pack and by libgit2's (`indexBoth`). The index is left whole: libgit2 1.5.1 itself
/// reads out of bounds on some damaged indexes (`OwnPacksTests` damages the index at places it
/// survives).
enum PackFuzz {
    struct Sample {
        let folder: URL
        let pack: URL
        let packBytes: Data
        let ids: [ObjectID]
    }

    nonisolated(unsafe) static var removeOnExit = ""
    static let sample: Sample = {
        do { return try make() } catch { fail("E_IO: cannot make the pack to fuzz: \(error)") }
    }()

    static func run(_ data: Data) {
        let sample = sample
        var pack = sample.packBytes
        let bytes = [UInt8](data)
        for start in stride(from: 0, to: min(bytes.count / 5, 8) * 5, by: 5) {
            let place = UInt32(bytes[start]) | UInt32(bytes[start + 1]) << 8 | UInt32(bytes[start + 2]) << 16 | UInt32(bytes[start + 3]) << 24
            pack[Int(place) % pack.count] ^= bytes[start + 4]
        }
        readThroughACopy(pack, whole: pack == sample.packBytes)
        indexBoth(pack, whole: pack == sample.packBytes, in: sample.folder)
        guard (try? pack.write(to: sample.pack, options: .atomic)) != nil,
              let plain = try? Repository.reopen(.path(sample.folder)),
              let own = try? Repository.reopen(.path(sample.folder), ownPacks: true)
        else { fail("E_IO: cannot write or open the damaged pack in \(sample.folder.path)") }
        for id in sample.ids {
            let content = (plain: try? plain.rawObject(id, maxBytes: 1 << 20), own: try? own.rawObject(id, maxBytes: 1 << 20))
            precondition(content.plain == content.own, "\(id.hex): libgit2 read \(content.plain?.count ?? -1) bytes, the reader \(content.own?.count ?? -1)")
            // A header libgit2 reads from a delta whose stream is damaged is whatever its buffer held
            // (it reads on past the failed inflation): headers are compared where the object reads.
            guard content.plain != nil else { continue }
            let header = (plain: try? plain.objectHeader(id), own: try? own.objectHeader(id))
            precondition(header.plain?.size == header.own?.size && header.plain?.type == header.own?.type,
                         "\(id.hex): libgit2's header \(String(describing: header.plain)), the reader's \(String(describing: header.own))")
        }
    }

    /// The damaged pack through the copy a clone's early checks read (`PackTee`), in pieces of odd
    /// sizes: it may end early, never crash or hang; the whole pack hands on every commit.
    static func readThroughACopy(_ pack: Data, whole: Bool) {
        guard let tee = PackTee() else { return }
        var start = 0
        for size in [5, 1, 300, 4096, 1 << 20] where start < pack.count {
            let end = min(pack.count, start + size)
            tee.append(pack.subdata(in: start..<end))
            start = end
        }
        tee.append(pack.subdata(in: start..<pack.count))
        tee.end()
        var handed = 0
        while tee.next({ _, _, _ in true }) != nil { handed += 1 }
        tee.forget()
        precondition(!whole || handed == commits, "the copy handed on \(handed) of \(commits) commits")
    }

    /// The damaged pack through Cohort's indexer of a clone's pack, in pieces as a fetch brings them:
    /// a pack it writes, libgit2's indexer writes too, to the same index byte for byte; one it
    /// declines leaves nothing behind. The whole pack it writes.
    static func indexBoth(_ pack: Data, whole: Bool, in folder: URL) {
        let ours = folder.appendingPathComponent("indexed-ours"), theirs = folder.appendingPathComponent("indexed-libgit2")
        for place in [ours, theirs] {
            try? FileManager.default.removeItem(at: place)
            guard (try? FileManager.default.createDirectory(at: place, withIntermediateDirectories: true)) != nil else { fail("E_IO: cannot make \(place.path)") }
        }
        let outcome = PackIndexer.index(pack, into: ours, piece: 4093)
        let written = (try? FileManager.default.contentsOfDirectory(atPath: ours.path)) ?? []
        precondition(!whole || outcome == .written, "the indexer declined the genuine pack")
        guard outcome == .written else {
            precondition(written.isEmpty, "the indexer declined the pack and left \(written)")
            return
        }
        guard let name = PackIndexer.indexWithLibgit2(pack, into: theirs) else {
            preconditionFailure("the indexer took a pack libgit2's indexer refuses")
        }
        let index = "pack-\(name).idx"
        precondition(written.sorted() == [index, "pack-\(name).pack"], "the indexer wrote \(written), libgit2 \(name)")
        let indexes = (ours: try? Data(contentsOf: ours.appendingPathComponent(index)), theirs: try? Data(contentsOf: theirs.appendingPathComponent(index)))
        precondition(indexes.ours != nil && indexes.ours == indexes.theirs, "the indexer and libgit2 wrote different indexes")
    }

    /// Commits in the genuine pack (its blobs are documents, not notices: none is handed on).
    static let commits = 40

    /// 40 versions of two documents, committed by `git fast-import` and repacked with deltas.
    private static func make() throws -> Sample {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cohort-fuzz-pack-\(getpid())")
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        removeOnExit = folder.path
        atexit { if !PackFuzz.removeOnExit.isEmpty { try? FileManager.default.removeItem(atPath: PackFuzz.removeOnExit) } }
        var stream = ""
        var lines: [String] = []
        for version in 0..<40 {
            lines.append("line \(version): \(String(repeating: "flour and water ", count: version % 5 + 1))")
            let first = lines.joined(separator: "\n") + "\n", second = lines.reversed().joined(separator: "\n") + "\n"
            let message = "version \(version)\n"
            stream += "commit refs/heads/main\ncommitter Ann <ann@example.com> \(1_700_000_000 + version) +0000\n"
            stream += "data \(message.utf8.count)\n\(message)"
            stream += "M 100644 inline docs/bread.md\ndata \(first.utf8.count)\n\(first)"
            stream += "M 100644 inline notes/cake.md\ndata \(second.utf8.count)\n\(second)\n"
        }
        try git(["init", "-q", "-b", "main"], in: folder)
        try git(["fast-import", "--quiet"], in: folder, input: Data(stream.utf8))
        try git(["repack", "-adfq", "--depth=20"], in: folder)
        let packs = folder.appendingPathComponent(".git/objects/pack")
        let names = try FileManager.default.contentsOfDirectory(atPath: packs.path)
        guard let pack = names.first(where: { $0.hasSuffix(".pack") }) else {
            throw CocoaError(.fileNoSuchFile)
        }
        let listed = try git(["cat-file", "--batch-all-objects", "--batch-check=%(objectname)"], in: folder)
        let ids = try String(decoding: listed, as: UTF8.self).split(separator: "\n").map { try ObjectID(hex: String($0)) }
        let packURL = packs.appendingPathComponent(pack)
        return Sample(folder: folder, pack: packURL, packBytes: try Data(contentsOf: packURL), ids: ids)
    }

    @discardableResult
    private static func git(_ arguments: [String], in folder: URL, input: Data = Data()) throws -> Data {
        try Process.output(of: "/usr/bin/git", arguments, in: folder, input: input)
    }
}
