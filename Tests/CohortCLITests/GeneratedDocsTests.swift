import CohortTestSupport
import Foundation
import Testing

/// The shell completions and the man page under Docs/ are generated from the command definitions
/// (`make docs`); these tests fail when a command changed and they were not generated again.
@Suite("generated completions and man page")
struct GeneratedDocsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test("the committed completions are what the commands generate", arguments: [("bash", "cohort.bash"), ("zsh", "_cohort"), ("fish", "cohort.fish")])
    func completionsAreCurrent(shell: String, file: String) throws {
        let generated = try run(cohortBinary.path, ["--generate-completion-script", shell], in: Self.root)
        #expect(generated.status == 0)
        let committed = try String(contentsOf: Self.root.appendingPathComponent("Docs/completions/\(file)"), encoding: .utf8)
        #expect(generated.stdout == committed, "Docs/completions/\(file) is stale: run `make docs`")
    }

    @Test("the man page covers every command")
    func manPageCoversCommands() throws {
        let page = try String(contentsOf: Self.root.appendingPathComponent("Docs/man/cohort.1"), encoding: .utf8)
        let help = try run(cohortBinary.path, ["--help"], in: Self.root).stdout
        let commands = help.components(separatedBy: "SUBCOMMANDS:").last?.split(separator: "\n")
            .compactMap { $0.trimmingCharacters(in: .whitespaces).split(separator: " ").first.map(String.init) }
            .filter { !$0.isEmpty && $0 != "See" } ?? []
        #expect(commands.count > 15)
        for command in commands {
            #expect(page.contains(command), "Docs/man/cohort.1 does not mention \(command): run `make docs`")
        }
    }
}
