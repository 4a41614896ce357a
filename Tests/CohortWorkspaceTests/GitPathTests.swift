import CohortGit
import Testing

/// The names git's `verify_path` refuses with NTFS and HFS+ protection, and some it accepts.
@Suite struct GitPathTests {
    @Test(arguments: [".git", ".GIT", ".Git", ".git.", ".git ", ".git. . ", ".git::$INDEX_ALLOCATION", "git~1", "GIT~1", "git~1.",
                      ".g\u{200C}it", "\u{FEFF}.git", ".gi\u{200D}t", "", ".", "..", "a\\b", "a\u{0}b"])
    func refused(name: String) {
        #expect(GitPath.refusal(component: name, mode: 0o100644) != nil, "\(name.debugDescription) was accepted")
    }

    @Test(arguments: [".gitmodules", ".GITMODULES", ".gitmodules.", ".gitmodules:x", "gitmod~1", "GITMOD~4", "gi7eba~1", "gi7eba~9",
                      ".gitattributes", "gitatt~2", "gi7d29~1", ".gitignore", "gi250a~3", ".mailmap", "maba30~1", ".g\u{200C}itmodules"])
    func controlFilesAsLinksRefused(name: String) {
        #expect(GitPath.refusal(component: name, mode: 0o120000) != nil, "link \(name.debugDescription) was accepted")
        #expect(GitPath.refusal(component: name, mode: 0o100644) == nil, "file \(name.debugDescription) was refused")
    }

    @Test(arguments: [".github", ".gitx", "git~2", "git~10", ".cohort", "README.md", "a b", "notes: draft.md", "gitmod~5", "x.git", "docs.git"])
    func accepted(name: String) {
        #expect(GitPath.refusal(component: name, mode: 0o100644) == nil, "\(name.debugDescription) was refused")
        #expect(name == "gitmod~5" ? GitPath.refusal(component: name, mode: 0o120000) == nil : true)
    }
}
