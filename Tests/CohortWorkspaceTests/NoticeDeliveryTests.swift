import CohortGit
import CohortNotices
import CohortNoticesTesting
import CohortTestSupport
import CohortWorkspace
import Foundation
import Testing

@Suite struct NoticeDeliveryTests {
    /// Everything that arrives reaches the sinks once; a mention only the workspace of the person it names.
    @Test func deliveryAndMentionFiltering() async throws {
        let scenario = try Scenario()
        let bo = try scenario.clone("bo", for: scenario.bo.home)
        _ = try scenario.owner.comment(on: "shortbread.md", text: "for @bo@example.com")
        _ = try scenario.owner.comment(on: "shortbread.md", text: "for @cy@example.com")
        try scenario.pull(into: bo, from: scenario.owner)

        let memory = MemoryNoticeSink()
        _ = try await bo.deliverNotices(to: [memory.spec(history: .all)])
        let types = memory.notices.map(\.type)
        #expect(types.filter { $0 == .contentCommented }.count == 2)
        let mentions = memory.notices.filter { $0.type == .mention }
        #expect(mentions.count == 1)
        #expect(mentions.first?.data["handle"] == "bo@example.com")
        #expect(types.contains(.membershipAdded) && types.contains(.contentCreated))

        // Nothing twice; only what is new next time.
        let count = memory.notices.count
        _ = try await bo.deliverNotices(to: [memory.spec(history: .all)])
        #expect(memory.notices.count == count)
        try scenario.write("new\n", to: "new.md", in: scenario.owner)
        _ = try #require(try scenario.owner.commitChanges(message: "new"))
        try scenario.pull(into: bo, from: scenario.owner)
        _ = try await bo.deliverNotices(to: [memory.spec(history: .all)])
        #expect(memory.notices.count == count + 1)
        #expect(memory.notices.last?.data["path"] == "new.md")
    }

    /// A new sink starts from now and one asking for everything gets the history, side by side,
    /// neither flooding the other; a sink added later starts from then.
    @Test func newSinksStartFromNowUnlessTheyAskForEverything() async throws {
        let scenario = try Scenario()
        let bo = try scenario.clone("bo", for: scenario.bo.home)
        let fresh = MemoryNoticeSink(name: "fresh")
        let everything = MemoryNoticeSink(name: "everything")
        let history = try bo.notices().filter { $0.type != .mention }.count
        _ = try await bo.deliverNotices(to: [fresh.spec(), everything.spec(history: .all)])
        #expect(fresh.notices.isEmpty && everything.notices.count == history)

        try scenario.write("new\n", to: "new.md", in: scenario.owner)
        _ = try #require(try scenario.owner.commitChanges(message: "new"))
        try scenario.pull(into: bo, from: scenario.owner)
        let later = MemoryNoticeSink(name: "later")
        _ = try await bo.deliverNotices(to: [fresh.spec(), everything.spec(history: .all)])
        #expect(fresh.notices.map { $0.data["path"] } == ["new.md"] && everything.notices.count == history + 1)
        // Added after that round: only what comes next.
        _ = try await bo.deliverNotices(to: [fresh.spec(), everything.spec(history: .all), later.spec()])
        #expect(later.notices.isEmpty)
        _ = try scenario.owner.comment(on: "new.md", text: "nice")
        try scenario.pull(into: bo, from: scenario.owner)
        _ = try await bo.deliverNotices(to: [fresh.spec(), everything.spec(history: .all), later.spec()])
        #expect(later.notices.map(\.type) == [.contentCommented] && fresh.notices.count == 2 && everything.notices.count == history + 2)
    }

    @Test func listingIsVerifiedAndInOrder() throws {
        let scenario = try Scenario()
        _ = try scenario.owner.comment(on: "shortbread.md", text: "last")
        let notices = try scenario.owner.notices()
        #expect(notices.first?.type == .contentCreated)
        #expect(notices.last?.type == .contentCommented)
        // A broken history is refused rather than listed.
        try scenario.write("plain\n", to: "plain.md", in: scenario.owner)
        #expect(try run("git", ["add", "plain.md"], in: scenario.owner.directory).status == 0)
        let environment = ["GIT_AUTHOR_NAME": "X", "GIT_AUTHOR_EMAIL": "x@example.com", "GIT_COMMITTER_NAME": "X", "GIT_COMMITTER_EMAIL": "x@example.com"]
        #expect(try run("git", ["-c", "commit.gpgsign=false", "commit", "-q", "-m", "plain"], in: scenario.owner.directory, environment: environment).status == 0)
        #expect(throws: (any Error).self) { try scenario.owner.notices() }
    }
}
