import CohortBase
import CohortGit
import CohortTestSupport
import Foundation
import Testing

/// Cohort reads trees in git's usual form itself (`TreeReader.c`) and leaves any other to libgit2: the
/// entries it lists must be libgit2's, and a tree libgit2 refuses stays refused. Trees are written by
/// hand with `git hash-object --literally`, past every check.
@Suite struct TreeReaderTests {
    /// A repository with one blob, and a way to write a tree from raw entries.
    struct Scene {
        let temporary: TemporaryDirectory
        let directory: URL
        let repository: Repository
        let blob: ObjectID

        init() throws {
            temporary = try TemporaryDirectory()
            directory = temporary.url
            _ = try run("/usr/bin/git", ["init", "-q", directory.path], in: directory)
            repository = try Repository(at: directory)
            blob = try Attacks.writeObject(Data("hello\n".utf8), type: "blob", inRepositoryAt: directory)
        }

        /// A tree of `entries`, each `MODE NAME` (bytes as given) followed by the blob's id.
        func tree(_ entries: [[UInt8]], id: Data? = nil) throws -> ObjectID {
            var data = Data()
            for entry in entries { data += Data(entry) + Data([0]) + (id ?? Data(hex: blob.hex)!) }
            return try Attacks.writeObject(data, type: "tree", inRepositoryAt: directory)
        }
    }

    /// Cohort's entries of `tree` against libgit2's, entry by entry (`entry(at:inTree:)` reads with libgit2).
    func expectLibgit2sEntries(_ tree: ObjectID, in scene: Scene, count: Int) throws {
        let entries = try scene.repository.entries(ofTree: tree)
        #expect(entries.count == count)
        for entry in entries {
            let libgit2s = try scene.repository.entry(at: entry.name, inTree: tree)
            #expect(libgit2s == entry, "\(entry.name): libgit2 reads \(String(describing: libgit2s))")
        }
    }

    @Test func usualTreesAreReadAsLibgit2ReadsThem() throws {
        let scene = try Scene()
        let tree = try scene.tree([Array("100644 a.md".utf8), Array("100755 b.sh".utf8), Array("120000 c".utf8),
                                   Array("160000 d".utf8), Array("100664 e".utf8), Array("040000 f".utf8),
                                   Array("100644 g\u{E9}".utf8)])
        try expectLibgit2sEntries(tree, in: scene, count: 7)
        let entries = try scene.repository.entries(ofTree: tree)
        #expect(entries.map(\.mode) == [0o100644, 0o100755, 0o120000, 0o160000, 0o100644, 0o040000, 0o100644])
    }

    /// Forms libgit2 reads and Cohort's pass does not take: libgit2 reads them, and Cohort lists what it read.
    @Test(arguments: ["0100644 a", "+100644 a", "0000000100644 a"])
    func unusualModesGoToLibgit2(entry: String) throws {
        let scene = try Scene()
        let tree = try scene.tree([Array(entry.utf8), Array("100644 b".utf8)])
        try expectLibgit2sEntries(tree, in: scene, count: 2)
        #expect(try scene.repository.entries(ofTree: tree).first?.mode == 0o100644)
        // A walk between a tree in the usual form and one libgit2 read finds the one change.
        let usual = try scene.tree([Array("100644 a".utf8), Array("100644 b".utf8)])
        #expect(try scene.repository.treeChanges(from: usual, to: tree).isEmpty)
        let other = try Attacks.writeObject(Data("other\n".utf8), type: "blob", inRepositoryAt: scene.directory)
        let changed = try scene.tree([Array("100644 a".utf8)], id: Data(hex: other.hex)!)
        let changes = try scene.repository.treeChanges(from: tree, to: changed)
        #expect(changes.map(\.kind) == [.modified, .deleted])
        #expect(changes.map { $0.oldPath ?? "" } == ["a", "b"])
    }

    /// Trees libgit2 refuses: Cohort refuses them too, with libgit2's error.
    @Test(arguments: [" 100644 a", "100644a", "100644 ", "777777 a", "-100644 a", "1x0644 a", "100644  a"])
    func treesLibgit2RefusesStayRefused(entry: String) throws {
        let scene = try Scene()
        let tree = try scene.tree([Array(entry.utf8)])
        let libgit2s = Result { try scene.repository.entry(at: "a", inTree: tree) }
        let cohorts = Result { try scene.repository.entries(ofTree: tree) }
        if case .success(let entry) = libgit2s, let entry {
            // libgit2 reads some of these (a name with a leading space): Cohort must read the same.
            #expect(try cohorts.get() == [entry])
        } else if case .success = libgit2s {
            #expect(try cohorts.get().allSatisfy { $0.name != "a" })
        } else {
            #expect(throws: CohortError.self) { try cohorts.get() }
        }
    }

    @Test func aTruncatedTreeIsRefused() throws {
        let scene = try Scene()
        var data = Data("100644 a".utf8) + Data([0]) + Data(hex: scene.blob.hex)!
        data.removeLast(3)
        let tree = try Attacks.writeObject(data, type: "tree", inRepositoryAt: scene.directory)
        #expect(throws: CohortError.self) { try scene.repository.entries(ofTree: tree) }
        #expect(throws: CohortError.self) { try scene.repository.treeChanges(from: nil, to: tree) }
        // Not a tree at all: refused as libgit2 refuses it.
        #expect(throws: CohortError.self) { try scene.repository.entries(ofTree: scene.blob) }
    }
}
