import CohortBase
import CohortGit
import CohortTestSupport
@testable import CohortVerification
import Foundation
import Testing

/// The stream that opens a commit's notices while its trees are walked (`NoticeStream`), and the bound
/// on a walk's changes it relies on.
@Suite struct NoticeStreamTests {
    /// More notices than the reader may hold: it never holds more than a chunk, every notice comes back
    /// under its own blob with its own answer, and a blob found at two paths keeps the first's.
    @Test(arguments: [0, 1, 4])
    func everyNoticeComesBackUnderItsBlobWithTheReaderBounded(threads: Int) throws {
        let stream = NoticeStream(threads: threads)
        let count = 2 * CommitPreparation.noticeChunk + 37
        let blobs = try (0..<count).map { try ObjectID(hex: String(format: "%040x", $0 + 1)) }
        for (index, blob) in blobs.enumerated() {
            stream.add((blob, "n\(index)")) { .failure(CohortError(.malformed, "notice \(index)")) }
        }
        // The first blob again, at another path: not read again, and the first path's answer stands.
        var readAgain = false
        stream.add((blobs[0], "again")) {
            readAgain = true
            return .failure(CohortError(.malformed, "again"))
        }
        #expect(!readAgain)
        let notices = stream.finish()
        #expect(stream.mostWaiting <= CommitPreparation.noticeChunk)
        #expect(notices.count == count)
        for (index, blob) in blobs.enumerated() {
            guard case .failure(let error)? = notices[blob] else {
                Issue.record("notice \(index) is missing or opened")
                continue
            }
            #expect(error.reason == "notice \(index)")
        }
    }

    /// A walk that failed: what is not opened yet is dropped (no thread of its own, fewer than a chunk:
    /// nothing was opened before), nothing comes back; kept, every one is opened.
    @Test(arguments: [false, true]) func aFailedWalkDropsWhatIsLeft(keeping: Bool) throws {
        let stream = NoticeStream(threads: 0)
        for index in 0..<100 {
            stream.add((try ObjectID(hex: String(format: "%040x", index + 1)), "n\(index)")) { .failure(CohortError(.malformed, "n")) }
        }
        #expect(stream.finish(keeping: keeping).count == (keeping ? 100 : 0))
        #expect(stream.opened == (keeping ? 100 : 0))
    }

    /// A walk's bound on changes holds inside one tree too (a single folder of many files), before the
    /// walk reads further.
    @Test func aWalkStopsAtItsBoundInsideOneTree() throws {
        let temp = try TemporaryDirectory()
        _ = try run("git", ["init", "-q", temp.url.path], in: temp.url)
        let folder = temp.path("notices")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for index in 0..<5 { try Data("\(index)\n".utf8).write(to: folder.appendingPathComponent("f\(index)")) }
        _ = try run("git", ["add", "."], in: temp.url)
        let tree = try ObjectID(hex: run("git", ["write-tree"], in: temp.url).stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        let repository = try Repository(at: temp.url)
        #expect(try repository.treeChanges(from: nil, to: tree, maxChanges: 5).count == 5)
        var seen = 0
        expectCode(.tooLarge) { try repository.treeChanges(from: nil, to: tree, maxChanges: 4, found: { _ in seen += 1 }) }
        #expect(seen == 4)
    }
}
