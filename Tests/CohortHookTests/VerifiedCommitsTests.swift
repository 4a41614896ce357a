import CohortGit
import CohortTestSupport
import CohortVerification
import Foundation
import Testing

/// `<git dir>/cohort/verified`: the commits the hook and `cohort verify` need not check again.
@Suite struct VerifiedCommitsTests {
    static func ids(_ count: Int, from first: UInt8 = 1) -> [ObjectID] {
        (0..<count).map { index in try! ObjectID(hex: String(repeating: String(format: "%02x", Int(first) + index), count: 20)) }
    }

    @Test func aNewFileGetsItsHeaderAndEveryIdAtOnceAndLaterIdsAreAppended() throws {
        let directory = try TemporaryDirectory()
        let memory = VerifiedCommits(repository: try Repository.create(at: directory.path("r.git"), bare: true))
        #expect(memory.load().isEmpty)
        let first = Self.ids(3)
        try memory.remember(first)
        let text = try String(contentsOf: memory.url, encoding: .utf8)
        #expect(text == "cohort-verified rules-3\n" + first.map { $0.hex + "\n" }.joined())
        let more = Self.ids(2, from: 10)
        try memory.remember(more)
        #expect(memory.load() == Set(first + more))
        #expect(try String(contentsOf: memory.url, encoding: .utf8).components(separatedBy: "cohort-verified").count == 2, "one header")
    }

    @Test func aFileFromOtherRulesCountsForNothingAndIsReplaced() throws {
        let directory = try TemporaryDirectory()
        let memory = VerifiedCommits(repository: try Repository.create(at: directory.path("r.git"), bare: true))
        let old = Self.ids(4)
        try FileManager.default.createDirectory(at: memory.url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(("cohort-verified rules-2\n" + old.map { $0.hex + "\n" }.joined()).utf8).write(to: memory.url)
        #expect(memory.load().isEmpty, "commits verified under older rules are checked again")
        let now = Self.ids(1, from: 40)
        try memory.remember(now)
        #expect(memory.load() == Set(now))
    }

    @Test func aTornLineLeftByACrashNeverReadsAsAnId() throws {
        let directory = try TemporaryDirectory()
        let memory = VerifiedCommits(repository: try Repository.create(at: directory.path("r.git"), bare: true))
        let first = Self.ids(1)
        try memory.remember(first)
        // A crash in the middle of an append: part of an id, no newline.
        let handle = try FileHandle(forWritingTo: memory.url)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(String(repeating: "ab", count: 10).utf8))
        try handle.close()
        let next = Self.ids(1, from: 50)
        try memory.remember(next)
        // The torn part and the id appended after it make one 60-character line: neither counts.
        #expect(memory.load() == Set(first))
    }
}
