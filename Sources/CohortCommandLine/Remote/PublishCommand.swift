import ArgumentParser
import CohortBase
import CohortRemote
import CohortSync
import Foundation

struct PublishCommand: CohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Register this collaboration on a Cohort server (owner only) and push it; prints its link.",
        discussion: "The server checks a proof of identity by the owner, pins the collaboration's genesis, and from then on serves it at URL/c/<identifier>. Publishing again pushes what is new."
    )

    @Argument(help: ArgumentHelp("The server's base URL, e.g. https://cohort.example.org.", valueName: "URL"))
    var server: String

    @Option(help: ArgumentHelp("The git remote to point at the link.", valueName: "NAME"))
    var remote = "origin"

    @Flag(help: "Print the outcome as JSON: {\"link\", \"created\", \"pushed\"}; no progress.")
    var json = false

    @OptionGroup var workspace: WorkspaceOptions

    func execute() throws {
        let workspace = try workspace.open()
        let base = server.hasSuffix("/") ? String(server.dropLast()) : server
        guard let url = URL(string: base), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
            throw CohortError(.malformed, "'\(server.prefix(80))' is not an http(s) URL", hint: "e.g. https://cohort.example.org")
        }
        let client = ServerClient()
        defer { try? Blocking.wait { await client.shutdown() } }
        let outcome = try workspace.publish(to: base, remote: remote, client: client, progress: json ? nil : TerminalProgress.make())
        TerminalProgress.finish()
        if json {
            Terminal.printJSON(["link": outcome.link.url, "created": outcome.created, "pushed": outcome.pushed.hex])
            return
        }
        Terminal.note(outcome.created ? "published; the server now hosts this collaboration" : "already published; pushed what was new")
        Terminal.print(outcome.link.url)
    }
}
