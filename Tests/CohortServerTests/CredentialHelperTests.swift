import CohortTestSupport
import Foundation
import Testing

/// `git-credential-cohort` spoken to directly, in git's credential protocol.
@Suite("git-credential-cohort", .serialized)
struct CredentialHelperTests {
    static var helper: String { cohortBinary.deletingLastPathComponent().appendingPathComponent("git-credential-cohort").path }

    static func ask(_ action: String, _ fields: [String: String], home: URL, in directory: URL) throws -> ProcessResult {
        let input = fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)\n" }.joined() + "\n"
        return try run(helper, [action], in: directory, environment: ["COHORT_HOME": home.path], stdin: Data(input.utf8))
    }

    @Test("answers a participant with a token, from the cache the second time, and forgets it on erase")
    func answersAndCaches() throws {
        let hosted = try Hosted()
        let url = try #require(URLComponents(string: hosted.link))
        let fields = ["protocol": "http", "host": "127.0.0.1:\(url.port ?? 0)", "path": String(url.path.dropFirst())]
        let bo = hosted.scenario.bo.home.directory
        let challenges = { hosted.server.logText().components(separatedBy: "/challenge\"").count - 1 }

        let first = try Self.ask("get", fields, home: bo, in: hosted.temp.url)
        #expect(first.status == 0)
        #expect(first.stdout.contains("username=cohort\npassword=cohort1."), "\(first.stdout) \(first.stderr)")
        let afterFirst = challenges()
        #expect(afterFirst >= 1)

        let second = try Self.ask("get", fields, home: bo, in: hosted.temp.url)
        #expect(second.stdout == first.stdout)
        #expect(challenges() == afterFirst, "the cached token was not used")
        let cached = try FileManager.default.contentsOfDirectory(atPath: bo.appendingPathComponent("tokens").path)
        #expect(cached.count == 1)
        let mode = try FileManager.default.attributesOfItem(atPath: bo.appendingPathComponent("tokens/\(cached[0])").path)[.posixPermissions] as? Int
        #expect(mode == 0o600)

        #expect(try Self.ask("erase", fields, home: bo, in: hosted.temp.url).stdout.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: bo.appendingPathComponent("tokens").path).isEmpty)
        let third = try Self.ask("get", fields, home: bo, in: hosted.temp.url)
        #expect(third.stdout.contains("password=cohort1."))
        #expect(challenges() > afterFirst)

        // A read-only participant gets a read token (the push token is refused), and git is told so.
        let dee = try Self.ask("get", fields, home: hosted.dee.home.directory, in: hosted.temp.url)
        #expect(dee.stdout.contains("password=cohort1."), "\(dee.stderr)")
        // Someone never invited: the code on standard error, and git is told to stop asking.
        let eve = try Self.ask("get", fields, home: hosted.eve.home.directory, in: hosted.temp.url)
        #expect(eve.stdout == "quit=1\n")
        #expect(eve.stderr.contains("E_UNKNOWN_ROOT"))
        // Without the path, the helper cannot know the collaboration and says how to fix that.
        let pathless = try Self.ask("get", ["protocol": "http", "host": fields["host"] ?? ""], home: bo, in: hosted.temp.url)
        #expect(pathless.stdout.isEmpty)
        #expect(pathless.stderr.contains("credential.useHttpPath"))
    }

    @Test("stays silent for other hosts, other paths and other operations")
    func ignoresTheRest() throws {
        let temp = try TemporaryDirectory()
        let home = temp.path("nobody")
        // Nothing listens on port 9 (discard) of loopback in a test machine; not a Cohort server either way.
        let elsewhere = try Self.ask("get", ["protocol": "http", "host": "127.0.0.1:9", "path": "c/abc"], home: home, in: temp.url)
        #expect(elsewhere.status == 0)
        #expect(elsewhere.stdout.isEmpty)
        let notALink = try Self.ask("get", ["protocol": "https", "host": "example.invalid", "path": "team/repo.git"], home: home, in: temp.url)
        #expect(notALink.stdout.isEmpty)
        let ssh = try Self.ask("get", ["protocol": "ssh", "host": "example.invalid"], home: home, in: temp.url)
        #expect(ssh.stdout.isEmpty)
        for action in ["store", "erase", "frobnicate"] {
            let result = try Self.ask(action, ["protocol": "http", "host": "127.0.0.1:9", "path": "c/abc", "password": "x"], home: home, in: temp.url)
            #expect(result.status == 0)
            #expect(result.stdout.isEmpty)
        }
    }

    @Test("explains itself to a person: --help, --version, no arguments, an unknown option")
    func explainsItself() throws {
        let temp = try TemporaryDirectory()
        let help = try run(Self.helper, ["--help"], in: temp.url)
        #expect(help.status == 0 && help.stdout.contains("usage: git-credential-cohort get|store|erase")
                && help.stdout.contains("credential.helper cohort"), "\(help.stdout)")
        let version = try run(Self.helper, ["--version"], in: temp.url)
        #expect(version.status == 0 && version.stdout.hasPrefix("git-credential-cohort "), "\(version.stdout)")
        let bare = try run(Self.helper, [], in: temp.url)
        #expect(bare.status == 64 && bare.stdout.isEmpty && bare.stderr.contains("usage:"), "\(bare.stderr)")
        let unknown = try run(Self.helper, ["--frobnicate"], in: temp.url)
        #expect(unknown.status == 64 && unknown.stdout.isEmpty, "\(unknown.stderr)")
        #expect(unknown.stderr == "error: E_USAGE: unknown option --frobnicate (see 'git-credential-cohort --help')\n")
    }
}
