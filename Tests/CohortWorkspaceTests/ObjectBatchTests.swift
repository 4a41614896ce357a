@testable import CohortGit
import CohortTestSupport
import CohortWorkspace
import Foundation
import Testing

/// A commit's new objects go to disk as one pack, written before anything names them.
@Suite struct ObjectBatchTests {
    /// Loose object files and pack files under `.git/objects`.
    func objectFiles(_ repository: Repository) throws -> (loose: Int, packs: Int) {
        let objects = repository.gitDirectory.appendingPathComponent("objects")
        var loose = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: objects.path) where name.count == 2 {
            loose += try FileManager.default.contentsOfDirectory(atPath: objects.appendingPathComponent(name).path).count
        }
        let packs = try FileManager.default.contentsOfDirectory(atPath: objects.appendingPathComponent("pack").path)
            .filter { $0.hasSuffix(".pack") }.count
        return (loose, packs)
    }

    @Test func aCommitOfManyChangesWritesOnePackAndNoLooseObject() throws {
        let scenario = try Scenario()
        let workspace = scenario.owner
        let before = try objectFiles(workspace.repository)
        for index in 0..<40 {
            try scenario.write("recipe \(index)\n", to: "cakes/\(index % 5)/r\(index).md", in: workspace)
        }
        try scenario.write("600 g flour\n", to: "bread/sourdough.md", in: workspace)
        let summary = try #require(try workspace.commitChanges(message: "forty cakes"))
        #expect(summary.notices.count == 41)
        let after = try objectFiles(workspace.repository)
        #expect(after.loose == before.loose, "loose objects written: \(after.loose - before.loose)")
        // The files, notices, folders and commit, written before the branch names them.
        #expect(after.packs == before.packs + 1)
        // Stock git and a fresh handle read all of it; nothing dangles.
        let fsck = try run("git", ["fsck", "--strict", "--no-dangling"], in: workspace.directory)
        #expect(fsck.status == 0, "\(fsck.stderr)")
        let status = try run("git", ["status", "--porcelain"], in: workspace.directory)
        #expect(status.stdout.isEmpty, "\(status.stdout)")
        let fresh = try Repository(at: workspace.directory)
        #expect(try fresh.resolve("HEAD") == summary.commit)
        #expect(try fresh.entry(at: "cakes/3/r8.md", inTree: fresh.tree(ofCommit: summary.commit)) != nil)
        // And the next sync's scan finds nothing to commit.
        #expect(try workspace.commitChanges(message: "again") == nil)
    }

    @Test func objectsReachDiskBeforeTheIndexOrABranchNamesThem() throws {
        let temporary = try TemporaryDirectory()
        let folder = temporary.path("repo")
        let repository = try Repository.create(at: folder, bare: false)
        try Data("hello\n".utf8).write(to: folder.appendingPathComponent("a.txt"))
        let onDisk = { (id: ObjectID) in
            (try? run("git", ["cat-file", "-e", id.hex], in: folder).status) == 0
        }
        let blob = try repository.batchingObjects { () throws -> ObjectID in
            let blob = try repository.writeBlob(Data("hello\n".utf8))
            #expect(!onDisk(blob), "written to disk before the batch was flushed")
            #expect(try repository.blob(blob, maxBytes: 100) == Data("hello\n".utf8), "the batch's own handle reads it")
            try repository.stage(["a.txt"])
            #expect(onDisk(blob), "the index named an object git cannot read")
            let other = try repository.writeBlob(Data("never named\n".utf8))
            #expect(!onDisk(other))
            return blob
        }
        #expect(onDisk(blob))
        #expect(try objectFiles(repository).loose == 0)
        // Outside a batch, objects are written as before (loose), and a batch that throws still
        // leaves what it wrote readable.
        let loose = try repository.writeBlob(Data("loose\n".utf8))
        #expect(onDisk(loose))
        struct Stop: Error {}
        var thrown: ObjectID?
        #expect(throws: Stop.self) {
            try repository.batchingObjects {
                thrown = try repository.writeBlob(Data("before the throw\n".utf8))
                throw Stop()
            }
        }
        #expect(onDisk(try #require(thrown)))
    }

    /// Every size of object (the pack header's size field takes 4 bits, then 7 a byte) and every type
    /// reads back byte for byte through stock git.
    @Test func objectsOfEverySizeReadBackThroughGit() throws {
        let temporary = try TemporaryDirectory()
        let folder = temporary.path("repo")
        let repository = try Repository.create(at: folder, bare: false)
        let sizes = [0, 1, 15, 16, 127, 128, 2047, 2048, 16383, 16384, 100_000, 3 << 20]
        let blobs = try repository.batchingObjects {
            try sizes.map { size in
                try repository.writeBlob(Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }))
            }
        }
        for (size, blob) in zip(sizes, blobs) {
            // verify-pack below checks that each object's bytes hash to its id.
            let read = try run("git", ["cat-file", "-s", blob.hex], in: folder)
            #expect(read.status == 0 && read.stdout == "\(size)\n", "\(size) bytes: \(read.stdout) \(read.stderr)")
        }
        let verify = try run("git", ["verify-pack", "-v"] + (try FileManager.default.contentsOfDirectory(
            atPath: folder.appendingPathComponent(".git/objects/pack").path).filter { $0.hasSuffix(".idx") }
            .map { ".git/objects/pack/" + $0 }), in: folder)
        #expect(verify.status == 0, "\(verify.stderr)")
        #expect(verify.stdout.contains("non delta: \(sizes.count) objects"), "\(verify.stdout)")
    }

    /// A batch never holds much more than 64 MiB: past that it writes a pack and goes on.
    @Test func aLargeBatchIsWrittenInPartsAsItGrows() throws {
        let temporary = try TemporaryDirectory()
        let folder = temporary.path("repo")
        let repository = try Repository.create(at: folder, bare: false)
        let blobs = try repository.batchingObjects {
            try (0..<7).map { index in try repository.writeBlob(Data(repeating: UInt8(index), count: 12 << 20)) }
        }
        #expect(try objectFiles(repository) == (loose: 0, packs: 2))
        for blob in blobs {
            let read = try run("git", ["cat-file", "-s", blob.hex], in: folder)
            #expect(read.stdout == "\(12 << 20)\n", "\(read.stderr)")
        }
        let fsck = try run("git", ["fsck", "--strict"], in: folder)
        #expect(fsck.status == 0, "\(fsck.stderr)")
    }

    /// A file past 16 MiB is not held in memory: it goes to a loose object, streamed from the file,
    /// and a commit of it works like any other.
    @Test func aLargeFileIsStreamedLooseAndCommitted() throws {
        let scenario = try Scenario()
        let workspace = scenario.owner
        let before = try objectFiles(workspace.repository)
        let big = Data((0..<(20 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 12) })
        try big.write(to: workspace.directory.appendingPathComponent("video.bin"))
        try scenario.write("small\n", to: "notes.md", in: workspace)
        let summary = try #require(try workspace.commitChanges(message: "a big file"))
        #expect(summary.notices.count == 2)
        let after = try objectFiles(workspace.repository)
        #expect(after.loose == before.loose + 1, "the large blob alone is loose")
        #expect(after.packs == before.packs + 1)
        let size = try run("git", ["cat-file", "-s", "HEAD:video.bin"], in: workspace.directory)
        #expect(size.stdout == "\(20 << 20)\n", "\(size.stderr)")
        let fsck = try run("git", ["fsck", "--strict", "--no-dangling"], in: workspace.directory)
        #expect(fsck.status == 0, "\(fsck.stderr)")
    }

    /// An index left behind HEAD (a sync killed between moving the branch and recording its notice
    /// files, or another tool writing the index meanwhile) is set right by the next look at the
    /// files, even when there is nothing to commit.
    @Test func anIndexBehindHeadIsWrittenAgainWhenNothingIsCommitted() throws {
        let scenario = try Scenario()
        let workspace = scenario.owner
        try scenario.write("600 g flour\n", to: "bread/sourdough.md", in: workspace)
        #expect(try workspace.commitChanges(message: "edit") != nil)
        #expect(try run("git", ["read-tree", "HEAD~1"], in: workspace.directory).status == 0)
        #expect(try !run("git", ["diff", "--cached", "--name-only"], in: workspace.directory).stdout.isEmpty)
        #expect(try workspace.commitChanges(message: "again") == nil)
        // The person's files (`.cohort/` is Cohort's and follows the next checkout).
        let staged = try run("git", ["diff", "--cached", "--name-only", "--", ".", ":!.cohort"], in: workspace.directory)
        #expect(staged.stdout.isEmpty, "the index still differs from HEAD: \(staged.stdout)")
    }
}
