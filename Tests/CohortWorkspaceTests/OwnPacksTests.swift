import CGit2
@testable import CohortGit
import CohortTestSupport
import Foundation
import Testing

/// A verification worker's handle reads packs through a state of its own, and reads every object as a
/// plain handle does, packed or loose.
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
        let own = try Repository.reopen(origin, ownPacks: 3)
        #expect(try backends(own) == backends(plain) + 1)

        let listed = try run("/usr/bin/git", ["cat-file", "--batch-all-objects", "--batch-check=%(objectname)"], in: folder)
        let ids = try listed.stdout.split(separator: "\n").map { try ObjectID(hex: String($0)) }
        #expect(ids.count > 20 && ids.contains(loose))
        for id in ids {
            #expect(try own.rawObject(id, maxBytes: 1 << 20) == plain.rawObject(id, maxBytes: 1 << 20), "\(id.hex)")
        }
        // The reads above went through a pack state of the handle's own: the pack's index is mapped
        // twice (the kernel names both by the file's one path), once for each handle.
        try withExtendedLifetime((own, plain)) {
            let maps = String(decoding: try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/self/maps")).readToEnd() ?? Data(), as: UTF8.self)
            let index = folder.appendingPathComponent(".git/objects/pack").path
            #expect(maps.split(separator: "\n").filter { $0.contains(index) && $0.hasSuffix(".idx") }.count == 2)
        }
    }

    /// A hook's handle (opened from git's environment) reads the quarantine's packs and the
    /// repository's own through a state of its own, the quarantine's first; other alternates (which
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

    private func backends(_ repository: Repository) throws -> Int {
        var odb: OpaquePointer?
        try #require(git_repository_odb(&odb, repository.pointer) == 0)
        defer { git_odb_free(odb) }
        return Int(git_odb_num_backends(odb))
    }
}
