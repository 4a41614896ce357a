import CohortTestSupport
import Foundation
import Testing

/// The example package of Docs/Plugins.md (`Examples/DigestSink`), built as a package of its own
/// against this checkout, as a user builds theirs: its `digest` sink type is read and checked by its
/// own `cohort-digest`, and notices reach it through `notices deliver` and a server's post-receive.
@Suite struct ExamplePackageTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `cohort-digest`, built once per test run (minutes the first time: it builds Cohort too).
    static let program: Result<URL, any Error> = Result {
        let swift = ProcessInfo.processInfo.environment["PATH", default: ""].split(separator: ":")
            .map { URL(fileURLWithPath: String($0)).appendingPathComponent("swift") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? URL(fileURLWithPath: "/opt/swift/usr/bin/swift")
        let arguments = ["build", "--package-path", root.appendingPathComponent("Examples/DigestSink").path,
                         "--scratch-path", root.appendingPathComponent(".build-example").path]
        var build = try run(swift.path, arguments + ["--product", "cohort-digest"], in: root)
        // A build folder left by an earlier run may not see a source file added to Cohort since (its
        // first build fails to find it, the next one builds): built once more before it counts.
        if build.status != 0 { build = try run(swift.path, arguments + ["--product", "cohort-digest"], in: root) }
        guard build.status == 0 else {
            let errors = (build.stdout + build.stderr).split(separator: "\n").filter { $0.contains("error") }.suffix(20).joined(separator: "\n")
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "swift build failed: \(errors)\n\(build.stderr.suffix(2000))"])
        }
        let bin = try run(swift.path, arguments + ["--show-bin-path"], in: root).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        return URL(fileURLWithPath: bin).appendingPathComponent("cohort-digest")
    }

    @Test func aSinkFromItsOwnPackageThroughTheCommandLineAndAServerHook() throws {
        let program = try Self.program.get()
        let sandbox = try Sandbox()
        var ann = try sandbox.recipes(["bread.md": "flour\n", "notes.md": "n\n"])
        ann.program = program
        // Delivering with no sink configured: what the collaboration holds so far counts as seen.
        let none = try ann.run(["notices", "deliver"])
        #expect(none.status == 0 && none.stderr.contains("no sinks configured"), "\(none)")
        let digest = sandbox.path("digest.md")
        try sandbox.write("recipes/.git/cohort/config.toml", """
            [[sinks]]
            type = "digest"
            path = "\(digest.path)"
            types = ["content.edited", "content.created"]

            """)
        let listed = try ann.run(["sinks", "list"])
        #expect(listed.status == 0 && listed.stdout.contains("digest:\(digest.path)  digest  notices from when it was added"), "\(listed)")

        // Cohort's own `cohort` does not know the type: one line naming the file, the line and the types it knows.
        var plain = ann
        plain.program = CLI.binary
        let unknown = try plain.run(["notices", "deliver"])
        expectRefusal(unknown, "E_MALFORMED")
        #expect(unknown.stderr.contains("config.toml:2: unknown sink type 'digest'") && unknown.stderr.contains("\"webhook\""), "\(unknown.stderr)")

        // Added after that delivery, the sink receives what happens from then on: not the files created at the start.
        try sandbox.write("recipes/bread.md", "flour\nwater\n")
        #expect(try ann.run(["commit", "-m", "water"]).status == 0)
        #expect(try ann.run(["comment", "bread.md", "--text", "salt?"]).status == 0)
        let delivered = try ann.run(["notices", "deliver"])
        #expect(delivered.status == 0 && delivered.stderr.contains("digest:\(digest.path): 2 delivered"), "\(delivered)")
        let lines = try sandbox.read("digest.md").split(separator: "\n")
        #expect(lines.first == "# Digest")
        #expect(lines.filter { $0.hasPrefix("- ") }.count == 1, "the comment is not a type this digest keeps")
        #expect(lines.last?.hasSuffix("content.edited bread.md by ann@example.com") == true, "\(lines)")

        // The factory's own checks come back as one line with the file, line and key.
        try sandbox.write("recipes/.git/cohort/config.toml", "[[sinks]]\ntype = \"digest\"\npath = \"d.md\"\ntypes = [\"content.eaten\"]\n")
        let bad = try ann.run(["sinks", "list"])
        expectRefusal(bad, "E_MALFORMED")
        #expect(bad.stderr.contains("config.toml:4: 'content.eaten' is not a notice type"), "\(bad.stderr)")

        // A server: the hooks `cohort-digest hook install` writes run `cohort-digest`, so the
        // repository's digest sink gets every accepted push's notices.
        let bare = sandbox.path("server.git")
        #expect(try run("git", ["init", "-q", "--bare", bare.path], in: sandbox.url).status == 0)
        #expect(try ann.run(["hook", "install", bare.path]).status == 0)
        let served = sandbox.path("served.md")
        try FileManager.default.createDirectory(at: bare.appendingPathComponent("cohort"), withIntermediateDirectories: true)
        try sandbox.write("server.git/cohort/config.toml", "[[sinks]]\ntype = \"digest\"\npath = \"\(served.path)\"\nhistory = \"all\"\n")
        let pushed = try run("git", ["push", "-q", bare.path, "main"], in: sandbox.path("recipes"))
        #expect(pushed.status == 0, "\(pushed.stderr)")
        #expect(pushed.stderr.contains("cohort: digest:\(served.path): "), "\(pushed.stderr)")
        let served1 = try sandbox.read("served.md")
        for expected in ["content.created bread.md by ann@example.com", "content.created notes.md by ann@example.com",
                         "content.edited bread.md by ann@example.com", "content.commented bread.md \"salt?\" by ann@example.com"] {
            #expect(served1.contains(expected), "\(served1)")
        }
    }
}
