import CohortTestSupport
import Foundation
import Testing

/// Progress as a person at a terminal sees it (through `script`, which gives the command a real
/// terminal), and `--json` for scripts.
@Suite("progress and --json of publish and clone", .serialized)
struct ProgressTests {
    /// What `command` writes to a terminal, its carriage returns and newlines as line breaks.
    func onATerminal(_ command: [String], home: URL, in directory: URL) throws -> [String] {
        let quoted = command.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let result = try run("script", ["-qec", quoted, "/dev/null"], in: directory, environment: ["COHORT_HOME": home.path])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        return result.stdout.split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    @Test("publish shows what it sends, clone what it receives, verifies and checks out; no line is drawn twice")
    func phasesOnATerminal() throws {
        let hosted = try Hosted()
        let ann = hosted.scenario.owner.directory
        for index in 0..<40 {
            let random = (0..<20_000).map { _ in UInt8.random(in: 0...255) }
            try Data(random).write(to: ann.appendingPathComponent("file-\(index).bin"))
        }
        #expect(try hosted.cohort(["commit", "-m", "files"], as: hosted.scenario.ann.home, in: ann).status == 0)
        let published = try onATerminal([cohortBinary.path, "publish", hosted.server.url],
                                        home: hosted.scenario.ann.home.directory, in: ann)
        #expect(published.contains { $0.hasPrefix("Sending objects: 100% (") }, "\(published)")
        #expect(published.last == hosted.link, "\(published)")

        let folder = hosted.temp.path("bo")
        let cloned = try onATerminal([cohortBinary.path, "clone", hosted.link, folder.path],
                                     home: hosted.scenario.bo.home.directory, in: hosted.temp.url)
        let receiving = cloned.firstIndex { $0.hasPrefix("Receiving objects: 100% (") }
        let verifying = cloned.firstIndex { $0.hasPrefix("Verifying ") && $0.hasSuffix(" commits…") }
        let checkingOut = cloned.firstIndex { $0 == "Checking out files…" }
        #expect(receiving != nil && verifying != nil && checkingOut != nil, "\(cloned)")
        if let receiving, let verifying, let checkingOut { #expect(receiving < verifying && verifying < checkingOut, "\(cloned)") }
        #expect(Set(cloned).count == cloned.count, "a line drawn twice: \(cloned)")
        #expect(cloned.last == folder.path, "\(cloned)")
    }

    @Test("a sync to a folder remote (stock git push, through the hook) shows what it sends too")
    func folderRemoteUpload() throws {
        let temp = try TemporaryDirectory()
        let home = temp.path("home")
        let cohort = { (arguments: [String], directory: URL) throws -> ProcessResult in
            try run(cohortBinary.path, arguments, in: directory, environment: ["COHORT_HOME": home.path])
        }
        #expect(try cohort(["id", "init", "--handle", "ann@example.com", "--name", "Ann"], temp.url).status == 0)
        #expect(try cohort(["start", "w", "--title", "W"], temp.url).status == 0)
        let bare = temp.path("server.git")
        #expect(try run("git", ["init", "-q", "--bare", bare.path], in: temp.url).status == 0)
        #expect(try cohort(["hook", "install", bare.path], temp.url).status == 0)
        let folder = temp.path("w")
        #expect(try run("git", ["remote", "add", "origin", bare.path], in: folder).status == 0)
        for index in 0..<30 {
            try Data((0..<30_000).map { _ in UInt8.random(in: 0...255) }).write(to: folder.appendingPathComponent("f\(index).bin"))
        }
        let lines = try onATerminal([cohortBinary.path, "sync"], home: home, in: folder)
        #expect(lines.contains { $0.hasPrefix("Sending objects: 100% (") }, "\(lines)")
        #expect(lines.contains("pushed"), "\(lines)")
        #expect(!lines.contains { $0.contains("remote:") }, "\(lines)")
    }

    @Test("--json: one object on standard output, no progress, even on a terminal")
    func json() throws {
        let hosted = try Hosted()
        let ann = hosted.scenario.owner.directory
        try Data("more\n".utf8).write(to: ann.appendingPathComponent("more.md"))
        #expect(try hosted.cohort(["commit", "-m", "more"], as: hosted.scenario.ann.home, in: ann).status == 0)
        let published = try hosted.cohort(["publish", hosted.server.url, "--json"], as: hosted.scenario.ann.home, in: ann)
        #expect(published.status == 0 && published.stderr.isEmpty, "\(published.stderr)")
        let publishObject = try JSONSerialization.jsonObject(with: Data(published.stdout.utf8)) as? [String: Any]
        #expect(publishObject?["link"] as? String == hosted.link && publishObject?["created"] as? Bool == false, "\(published.stdout)")
        #expect(publishObject?["pushed"] as? String == (try hosted.serverTip()), "\(published.stdout)")

        let folder = hosted.temp.path("cy")
        let lines = try onATerminal([cohortBinary.path, "clone", hosted.link, folder.path, "--json"],
                                    home: hosted.scenario.cy.home.directory, in: hosted.temp.url)
        #expect(lines.count == 1, "\(lines)")
        let object = try JSONSerialization.jsonObject(with: Data((lines.first ?? "").utf8)) as? [String: Any]
        #expect(object?["directory"] as? String == folder.path && object?["identifier"] as? String == hosted.identifier, "\(lines)")
        #expect((object?["commits"] as? Int ?? 0) >= 3 && object?["participants"] as? Int == 4, "\(lines)")
    }
}
