import CohortGit
import CohortTestSupport
@testable import CohortVerification
import Foundation
import Testing

/// `<git dir>/cohort/verified`: the commits the hook and `cohort verify` need not check again.
@Suite struct VerifiedCommitsTests {
    static func ids(_ count: Int, from first: UInt8 = 1) -> [ObjectID] {
        (0..<count).map { index in try! ObjectID(hex: String(repeating: String(format: "%02x", Int(first) + index), count: 20)) }
    }

    /// A fresh memory in a bare repository of its own, with `ids` remembered, then `left` written at
    /// the file's end as a crash would leave it.
    static func memory(in directory: TemporaryDirectory, remembering ids: [ObjectID], then left: Data) throws -> VerifiedCommits {
        let memory = VerifiedCommits(repository: try Repository.create(at: directory.path("r.git"), bare: true))
        try memory.remember(ids)
        let handle = try FileHandle(forWritingTo: memory.url)
        try handle.seekToEnd()
        try handle.write(contentsOf: left)
        try handle.close()
        return memory
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

    /// A push asks only about the commits it lists: the answer is what `load` holds of them, torn
    /// lines and a file from other rules counting for nothing here too.
    @Test func askedAboutAFewCommitsItAnswersAsTheWholeFileWould() throws {
        let directory = try TemporaryDirectory()
        let memory = VerifiedCommits(repository: try Repository.create(at: directory.path("r.git"), bare: true))
        let stored = Self.ids(40)
        #expect(memory.remembered(among: stored).isEmpty, "no file yet")
        try memory.remember(stored)
        // Ids sharing their first eight digits with a stored one, and ids never stored.
        let neighbours = stored.prefix(5).map { try! ObjectID(hex: String($0.hex.prefix(8)) + String(repeating: "e", count: 32)) }
        let strangers = Self.ids(5, from: 200)
        let asked = Array(stored.suffix(7)) + neighbours + strangers
        #expect(memory.remembered(among: asked) == Set(stored.suffix(7)))
        #expect(memory.remembered(among: asked) == memory.load().intersection(asked))
        #expect(memory.remembered(among: [ObjectID]()).isEmpty)
        // A torn line: part of an id, then the next id on the same line.
        let handle = try FileHandle(forWritingTo: memory.url)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(String(stored[0].hex.prefix(20)).utf8))
        try handle.close()
        let next = Self.ids(1, from: 90)
        try memory.remember(next)
        #expect(memory.remembered(among: next + stored.prefix(1)) == Set(stored.prefix(1)))
        // A line in capitals, and a last line without its line feed, read as `load` reads them.
        let capitals = Self.ids(2, from: 0xa0)
        let handle2 = try FileHandle(forWritingTo: memory.url)
        try handle2.seekToEnd()
        try handle2.write(contentsOf: Data((capitals[0].hex.uppercased() + "\n" + capitals[1].hex).utf8))
        try handle2.close()
        #expect(memory.remembered(among: capitals) == Set(capitals))
        #expect(memory.load().isSuperset(of: capitals))
        // Written by older rules: nothing counts.
        try Data(("cohort-verified rules-2\n" + stored.map { $0.hex + "\n" }.joined()).utf8).write(to: memory.url)
        #expect(memory.remembered(among: stored).isEmpty)
    }

    /// A push's questions: the first few scanned for, then (past `scans`, or for many commits at once)
    /// answered from every id parsed once; every answer the whole file's.
    @Test func aPushsQuestionsAreAnsweredAsTheWholeFileWould() throws {
        let directory = try TemporaryDirectory()
        let memory = VerifiedCommits(repository: try Repository.create(at: directory.path("r.git"), bare: true))
        let stored = Self.ids(60)
        try memory.remember(stored)
        let questions = VerifiedCommits.Questions(memory)
        for round in 0..<(VerifiedCommits.Questions.scans + 3) {
            let asked = Array(stored[(round * 5)..<(round * 5 + 3)]) + Self.ids(2, from: UInt8(100 + 2 * round))
            #expect(questions.remembered(among: asked) == Set(stored[(round * 5)..<(round * 5 + 3)]), "question \(round)")
        }
        let many = (0..<(VerifiedCommits.Questions.fewCommits + 1)).map { try! ObjectID(hex: String(format: "%040x", 0xbeef0000 + $0)) }
        #expect(VerifiedCommits.Questions(memory).remembered(among: many + stored.prefix(2)) == Set(stored.prefix(2)))
    }

    @Test func aTornLineLeftByACrashNeverReadsAsAnId() throws {
        let directory = try TemporaryDirectory()
        let first = Self.ids(1)
        // A crash in the middle of an append: part of an id, no newline.
        let memory = try Self.memory(in: directory, remembering: first, then: Data(String(repeating: "ab", count: 10).utf8))
        let next = Self.ids(1, from: 50)
        try memory.remember(next)
        // The torn part and the id appended after it make one 60-character line: neither counts.
        #expect(memory.load() == Set(first))
    }

    /// What an append never flushed can leave after a crash on some file systems (`remember` does not
    /// wait for the disk): a run of zero bytes where its lines were. Neither the zeros nor the id
    /// glued after them count; the lines after those do.
    @Test func zerosLeftByAnUnflushedAppendNeverReadAsAnId() throws {
        let directory = try TemporaryDirectory()
        let first = Self.ids(2)
        let memory = try Self.memory(in: directory, remembering: first, then: Data(count: 4096))
        let glued = Self.ids(1, from: 50)
        try memory.remember(glued)
        let after = Self.ids(2, from: 80)
        try memory.remember(after)
        #expect(memory.load() == Set(first + after))
        #expect(memory.remembered(among: first + glued + after) == Set(first + after))
    }
}
