import CohortTestSupport
import Foundation
import Testing

/// Docs/Architecture.md's layers are Package.swift's, and no target depends on what the document's
/// "Allowed dependencies" table forbids it (`Scripts/architecture.py --check`).
@Suite struct ArchitectureTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func check(_ arguments: [String] = []) throws -> ProcessResult {
        try run("/usr/bin/env", ["python3", "Scripts/architecture.py", "--check"] + arguments, in: root)
    }

    @Test func thePackageKeepsTheLayersTheDocumentAllows() throws {
        let result = try Self.check()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("ok: "), "\(result.stdout)")
    }

    /// The check can fail: the package as it is, with one edge the document forbids added (git
    /// learning about people), is refused by name; so is a document whose drawing is not the package's.
    @Test func aForbiddenDependencyAndAStaleDrawingAreCaught() throws {
        let temp = try TemporaryDirectory()
        let dump = try run("/usr/bin/env", ["swift", "package", "--scratch-path", temp.path("scratch").path, "dump-package"], in: Self.root)
        #expect(dump.status == 0, "\(dump.stderr)")
        var package = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
        var targets = try #require(package["targets"] as? [[String: Any]])
        let git = try #require(targets.firstIndex { $0["name"] as? String == "CohortGit" })
        var dependencies = try #require(targets[git]["dependencies"] as? [Any])
        dependencies.append(["byName": ["CohortIdentity", NSNull()]])
        targets[git]["dependencies"] = dependencies
        package["targets"] = targets
        let forbidden = temp.url.appendingPathComponent("package.json")
        try JSONSerialization.data(withJSONObject: package).write(to: forbidden)

        let refused = try Self.check(["--package-json", forbidden.path])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("error: E_MALFORMED: CohortGit depends on CohortIdentity, which the 'Allowed dependencies' table forbids it"),
                "\(refused.stderr)")
        // The drawing of the package as it is no longer matches the document either.
        #expect(refused.stderr.contains("the layers diagram is not Package.swift's as it is"), "\(refused.stderr)")

        // The package as it is, against a document whose drawing was edited by hand.
        let original = try String(contentsOf: Self.root.appendingPathComponent("Docs/Architecture.md"), encoding: .utf8)
        let edited = temp.url.appendingPathComponent("Architecture.md")
        let gitRow = "CGit2 CohortBase CGit2Shim\n"
        try #require(original.contains(gitRow))
        try original.replacingOccurrences(of: gitRow, with: "CGit2 CGit2Shim\n").write(to: edited, atomically: true, encoding: .utf8)
        let stale = try Self.check(["--document", edited.path])
        #expect(stale.status == 1)
        #expect(stale.stderr.contains("the layers diagram is not Package.swift's as it is (run `make docs`)"), "\(stale.stderr)")

        // A row taken out of the table: the target is named as undocumented.
        try #require(original.contains("| `CohortHooks` |"))
        try original.replacingOccurrences(of: "| `CohortHooks` |", with: "| `CohortHooksGone` |")
            .write(to: edited, atomically: true, encoding: .utf8)
        let unlisted = try Self.check(["--document", edited.path])
        #expect(unlisted.status == 1)
        #expect(unlisted.stderr.contains("CohortHooks has no row in the 'Allowed dependencies' table"), "\(unlisted.stderr)")
        #expect(unlisted.stderr.contains("names CohortHooksGone, which is not a target of Package.swift"), "\(unlisted.stderr)")
    }

    /// A module reached without a declared dependency is caught however the import is spelled; an
    /// extra row, a target with no sources and a second row are named. A package of three targets,
    /// made here, where `Low` may depend on nothing and `High` on `Low` only.
    @Test func importsOfUndeclaredModulesAreCaughtInEveryForm() throws {
        let temp = try TemporaryDirectory()
        func target(_ name: String, _ dependencies: [String], type: String = "regular") -> [String: Any] {
            ["name": name, "type": type, "dependencies": dependencies.map { ["byName": [$0, NSNull()]] }]
        }
        let package: [String: Any] = ["targets": [target("Low", []), target("High", ["Low"]), target("git-tool", ["High"], type: "executable"),
                                                  target("Empty", [])]]
        let json = temp.path("package.json")
        try JSONSerialization.data(withJSONObject: package).write(to: json)
        let sources: [String: String] = [
            "Sources/Low/a.swift": "@_implementationOnly import High\n",
            "Sources/Low/b.swift": "#if canImport(High)\n    import struct High.Thing\n#endif\n",
            "Sources/Low/c.swift": "@preconcurrency @_spi(Internal) private import git_tool // the tool\n",
            "Sources/High/d.swift": "import Low\nimport Foundation\n",
            "Sources/git-tool/main.swift": "import High\n",
        ]
        for (path, text) in sources {
            try FileManager.default.createDirectory(at: temp.path(path).deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: temp.path(path))
        }
        try FileManager.default.createDirectory(at: temp.path("Sources/Empty"), withIntermediateDirectories: true)
        let document = temp.path("Architecture.md")
        try Data("""
            # Architecture

            <!-- layers: drawn by `python3 Scripts/architecture.py --write` from Package.swift; do not edit by hand -->
            ```
            ```
            <!-- end of layers -->

            ## Allowed dependencies

            | target | may depend on | and never on |
            |---|---|---|
            | `Low`, `Empty` | nothing | |
            | `High` | `Low` | |
            | `git-tool` | `High` | |
            | `High` | `Low` `git-tool` | |

            """.utf8).write(to: document)
        let result = try Self.check(["--package-json", json.path, "--document", document.path, "--root", temp.url.path])
        #expect(result.status == 1)
        for line in [
            "Sources/Low/a.swift imports High, which Low does not depend on in Package.swift",
            "Sources/Low/b.swift imports High, which Low does not depend on in Package.swift",
            "Sources/Low/c.swift imports git_tool, which Low does not depend on in Package.swift",
            "High has two rows in the 'Allowed dependencies' table",
            "Empty: no sources in Sources/Empty",
        ] {
            #expect(result.stderr.contains("error: E_MALFORMED: " + line), "\(line)\n\(result.stderr)")
        }
        #expect(!result.stderr.contains("Sources/High/d.swift") && !result.stderr.contains("Sources/git-tool/main.swift"), "\(result.stderr)")
    }
}
