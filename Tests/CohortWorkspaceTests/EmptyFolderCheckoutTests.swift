import CGit2
import CohortBase
@testable import CohortGit
import CohortTestSupport
import Foundation
import Testing

/// The first checkout of a clone (`Repository.checkoutHeadIntoEmptyFolder`) writes the files on
/// several threads itself: they must be exactly git's, with an index git finds clean, and nothing in
/// the folder, or beyond a link, may ever be overwritten or written through.
@Suite struct EmptyFolderCheckoutTests {
    /// A repository made by the git CLI with `files` (path → content), `links` (path → target bytes)
    /// and `executables`, committed on `main`.
    static func source(in directory: TemporaryDirectory, files: [String: Data], links: [String: [UInt8]] = [:],
                       executables: Set<String> = []) throws -> URL {
        let folder = directory.path("source")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        #expect(try git(["init", "-q", "-b", "main"], in: folder).status == 0)
        for (path, content) in files {
            let url = folder.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try content.write(to: url)
            if executables.contains(path) { chmod(url.path, 0o755) }
        }
        for (path, target) in links {
            let url = folder.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            #expect((target + [0]).withUnsafeBytes { symlink($0.baseAddress!.assumingMemoryBound(to: CChar.self), url.path) } == 0)
        }
        #expect(try git(["add", "-A"], in: folder).status == 0)
        #expect(try git(["commit", "-qm", "files"], in: folder).status == 0)
        return folder
    }

    static func git(_ arguments: [String], in folder: URL) throws -> ProcessResult {
        try run("/usr/bin/git", ["-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "core.autocrlf=false", "-c", "core.quotePath=false"] + arguments, in: folder)
    }

    /// Every path under `folder` (but `.git`), by its bytes (two spellings of one character are two
    /// paths): its type, whether it is executable, and its content or link target. (Other permission
    /// bits follow the umask differently: git makes files 0666, libgit2 and Cohort 0644, before it.)
    static func listing(_ folder: URL) throws -> [[UInt8]: String] {
        var found: [[UInt8]: String] = [:]
        let enumerator = try #require(FileManager.default.enumerator(atPath: folder.path))
        while let path = enumerator.nextObject() as? String {
            if path == ".git" { enumerator.skipDescendants(); continue }
            let full = folder.appendingPathComponent(path).path
            var info = stat()
            guard lstat(full, &info) == 0 else { continue }
            let mode = String(info.st_mode & (S_IFMT | 0o100), radix: 8)
            switch info.st_mode & S_IFMT {
            case S_IFLNK:
                var target = [CChar](repeating: 0, count: 4096)
                let count = readlink(full, &target, target.count)
                found[Array(path.utf8)] = "\(mode) -> \(Data(target.prefix(max(0, count)).map { UInt8(bitPattern: $0) }).base64EncodedString())"
            case S_IFREG:
                found[Array(path.utf8)] = "\(mode) \(try Data(contentsOf: URL(fileURLWithPath: full)).base64EncodedString())"
            default:
                found[Array(path.utf8)] = mode
            }
        }
        return found
    }

    /// Clones `source` without a checkout through libgit2, then checks it out with Cohort's checkout.
    @discardableResult
    static func cohortClone(_ source: URL, into folder: URL, before: (URL) throws -> Void = { _ in }) throws -> Repository.CheckoutWriter {
        let repository = try Repository.clone(from: source.path, into: folder, checkout: false)
        try before(folder)
        return try repository.checkoutHeadIntoEmptyFolder()
    }

    @Test func theFilesAndTheIndexAreGits() throws {
        let directory = try TemporaryDirectory()
        var files: [String: Data] = [
            "README.md": Data("hello\n".utf8),
            "empty.txt": Data(),
            "tools/run.sh": Data("#!/bin/sh\necho run\n".utf8),
            "café/ünïcode.md": Data("ü\n".utf8),
            "data/binary.bin": Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7) }),
            "data/large.txt": Data(String(repeating: "a line of text\n", count: 70_000).utf8),
        ]
        for index in 0..<600 { files["many/\(index % 7)/file-\(index).md"] = Data("file \(index)\n".utf8) }
        let source = try Self.source(in: directory, files: files, links: ["link": Array("tools/run.sh".utf8), "odd-link": [0x61, 0xFF, 0x2F, 0x62]],
                                     executables: ["tools/run.sh"])
        let ours = directory.path("ours")
        #expect(try Self.cohortClone(source, into: ours) == .cohort)
        let theirs = directory.path("theirs")
        #expect(try Self.git(["clone", "-q", source.path, theirs.path], in: directory.url).status == 0)

        #expect(try Self.listing(ours) == Self.listing(theirs))
        #expect(try Self.listing(ours).count == files.count + 2 + 11)   // and 11 folders
        let staged = try Self.git(["ls-files", "-s"], in: ours)
        #expect(staged.stdout == (try Self.git(["ls-files", "-s"], in: theirs)).stdout && !staged.stdout.isEmpty)
        let status = try Self.git(["status", "--porcelain", "--ignored"], in: ours)
        #expect(status.status == 0 && status.stdout.isEmpty, "\(status.stdout)")
        // Each entry holds its file's stat data as written (git compares these before any content).
        let debug = try Self.git(["ls-files", "--debug"], in: ours).stdout
        var checked = 0
        let lines = debug.split(separator: "\n").map(String.init)
        for (index, line) in lines.enumerated() where !line.hasPrefix(" ") {
            var info = stat()
            #expect(lstat(ours.appendingPathComponent(line).path, &info) == 0, "\(line)")
            let fields = lines[(index + 1)...].prefix(5).joined(separator: " ")
            #expect(fields.contains("mtime: \(info.st_mtim.tv_sec):\(info.st_mtim.tv_nsec)"), "\(line): \(fields)")
            #expect(fields.contains("ino: \(info.st_ino)") && fields.contains("size: \(info.st_size)"), "\(line): \(fields)")
            checked += 1
        }
        #expect(checked == files.count + 2)
        // libgit2's own look at the folder (Cohort's scan where git is missing) finds it clean too.
        let reopened = try Repository(at: ours)
        let index = try reopened.freshIndex()
        defer { git_index_free(index) }
        #expect(try reopened.scanWithLibgit2(index).isEmpty)
    }

    /// Attributes that ask for a filter, in the tree or in `info/attributes`: libgit2's checkout writes
    /// the folder, with the filters applied as git applies them.
    @Test func filtersLeaveTheCheckoutToLibgit2() throws {
        let directory = try TemporaryDirectory()
        let files: [String: Data] = [".gitattributes": Data("*.txt eol=crlf\nid.c ident\n".utf8), "a.txt": Data("one\ntwo\n".utf8),
                                     "id.c": Data("/* $Id$ */\n".utf8), "plain.md": Data("plain\n".utf8)]
        let source = try Self.source(in: directory, files: files)
        let ours = directory.path("ours")
        #expect(try Self.cohortClone(source, into: ours) == .libgit2)
        let theirs = directory.path("theirs")
        #expect(try Self.git(["clone", "-q", source.path, theirs.path], in: directory.url).status == 0)
        #expect(try Self.listing(ours) == Self.listing(theirs))
        #expect(try Data(contentsOf: ours.appendingPathComponent("a.txt")) == Data("one\r\ntwo\r\n".utf8))

        let otherDirectory = try TemporaryDirectory()
        let other = try Self.source(in: otherDirectory, files: ["b.md": Data("x\ny\n".utf8)])
        let withInfo = directory.path("info")
        let writer = try Self.cohortClone(other, into: withInfo) { folder in
            try Data("*.md eol=crlf\n".utf8).write(to: folder.appendingPathComponent(".git/info/attributes"))
        }
        #expect(writer == .libgit2)
        #expect(try Data(contentsOf: withInfo.appendingPathComponent("b.md")) == Data("x\r\ny\r\n".utf8))
        #expect(try Self.git(["status", "--porcelain"], in: withInfo).stdout.isEmpty)

        // libgit2's checkout too writes only where nothing is: a file put there meanwhile stops it,
        // and keeps its bytes.
        let mine = Data("mine\n".utf8)
        let kept = directory.path("kept")
        expectCode(.git) { try Self.cohortClone(source, into: kept) { folder in try mine.write(to: folder.appendingPathComponent("a.txt")) } }
        #expect(try Data(contentsOf: kept.appendingPathComponent("a.txt")) == mine)
    }

    /// A file someone put in the folder meanwhile, or a link in place of a folder, fails the checkout:
    /// the file keeps its bytes and nothing is written where the link points.
    @Test func whatIsInTheWayIsNeitherOverwrittenNorFollowed() throws {
        let directory = try TemporaryDirectory()
        let source = try Self.source(in: directory, files: ["notes/plan.md": Data("theirs\n".utf8), "top.md": Data("top\n".utf8)])
        let mine = Data("mine, unsaved anywhere else\n".utf8)
        expectCode(.io) {
            try Self.cohortClone(source, into: directory.path("file")) { folder in
                try FileManager.default.createDirectory(at: folder.appendingPathComponent("notes"), withIntermediateDirectories: true)
                try mine.write(to: folder.appendingPathComponent("notes/plan.md"))
            }
        }
        #expect(try Data(contentsOf: directory.path("file/notes/plan.md")) == mine)

        let outside = directory.path("outside")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        expectCode(.io) {
            try Self.cohortClone(source, into: directory.path("link")) { folder in
                try FileManager.default.createSymbolicLink(at: folder.appendingPathComponent("notes"), withDestinationURL: outside)
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)
    }

    /// A tree entry as written by hand: a file (with its mode as stored), a link, or a folder whose
    /// entries keep the order given.
    indirect enum Node {
        case file(String, mode: String = "100644")
        case link(String)
        case folder([([UInt8], Node)])
    }

    /// Trees built by hand, each with a link to a folder outside the clone somewhere in it, written
    /// either by Cohort's checkout, refused by it, or left to libgit2's (which removes links in the
    /// way): nothing ever lands outside the folder, and what Cohort writes is git's checkout.
    @Test(arguments: ["twice", "twice apart", "two spellings", "two spellings, no link", "dot-dot", "mode 100664", "not UTF-8", "unsorted",
                      ".GIT", "git~1", ".g\u{200C}it", "empty link", "empty folder", "empty tree", "neighbours"])
    func aHandBuiltTreeWritesNothingOutside(_ shape: String) throws {
        let directory = try TemporaryDirectory()
        let outside = directory.path("outside")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        let source = directory.path("source")
        try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
        #expect(try Self.git(["init", "-q", "-b", "main"], in: source).status == 0)
        func object(_ type: String, _ content: Data) throws -> String {
            let written = try run("/usr/bin/git", ["hash-object", "-t", type, "--literally", "-w", "--stdin"], in: source, stdin: content)
            #expect(written.status == 0, "\(written.stderr)")
            return written.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        func write(_ node: Node) throws -> (mode: String, id: String) {
            switch node {
            case .file(let text, let mode): return (mode, try object("blob", Data(text.utf8)))
            case .link(let target): return ("120000", try object("blob", Data(target.utf8)))
            case .folder(let entries):
                var bytes = Data()
                for (name, child) in entries {
                    let (mode, id) = try write(child)
                    bytes.append(Data("\(mode) ".utf8) + Data(name) + Data([0]))
                    var index = id.startIndex
                    while index < id.endIndex {
                        let next = id.index(index, offsetBy: 2)
                        bytes.append(UInt8(id[index..<next], radix: 16) ?? 0)
                        index = next
                    }
                }
                return ("40000", try object("tree", bytes))
            }
        }
        let link = Node.link(outside.path)
        let file = Node.file("written?\n")
        let nfd = Array("e\u{301}".utf8), nfc = Array("\u{e9}".utf8)
        let top: [([UInt8], Node)] = switch shape {
        case "twice": [(Array("a".utf8), link), (Array("a".utf8), .folder([(Array("f".utf8), file)]))]
        case "twice apart": [(Array("a".utf8), link), (Array("a-b".utf8), file), (Array("a".utf8), .folder([(Array("f".utf8), file)]))]
        case "two spellings":
            [(Array("d".utf8), .folder([(nfd, .folder([(Array("f".utf8), file)])), (nfc, link), (nfc, .folder([(Array("authorized_keys".utf8), file)]))]))]
        case "two spellings, no link": [(Array("d".utf8), .folder([(nfd, .folder([(Array("f".utf8), file)])), (nfc, .folder([(Array("g".utf8), file)]))]))]
        case "dot-dot": [(Array("../escape".utf8), file), (Array("ok.md".utf8), file)]
        case "mode 100664": [(Array("a.md".utf8), .file("a\n", mode: "100664")), (Array("l".utf8), link)]
        case "not UTF-8": [(Array("caf".utf8) + [0xE9] + Array(".md".utf8), file), (Array("l".utf8), link)]
        case ".GIT", "git~1", ".g\u{200C}it": [(Array(shape.utf8), .folder([(Array("hooks".utf8), .folder([(Array("post-checkout".utf8), .file("#!/bin/sh\n", mode: "100755"))]))]))]
        case "empty link": [(Array("a.md".utf8), file), (Array("l".utf8), .link(""))]
        case "empty folder": [(Array("a.md".utf8), file), (Array("e".utf8), .folder([])), (Array("f".utf8), .folder([(Array("g".utf8), .folder([]))]))]
        case "empty tree": []
        case "neighbours":
            [(Array("a!".utf8), file), (Array("a-b".utf8), file), (Array("a.b".utf8), file), (Array("a".utf8), .folder([(Array("x".utf8), file)])), (Array("a0".utf8), file)]
        default: [(Array("b".utf8), file), (Array("a".utf8), link)]
        }
        let tree = try write(.folder(top)).id
        let commit = try Self.git(["commit-tree", tree, "-m", "hand-built"], in: source)
        #expect(commit.status == 0, "\(commit.stderr)")
        #expect(try Self.git(["update-ref", "refs/heads/main", commit.stdout.trimmingCharacters(in: .whitespacesAndNewlines)], in: source).status == 0)

        let clone = directory.path("clone")
        #expect(try Self.git(["clone", "-q", "--no-checkout", source.path, clone.path], in: directory.url).status == 0)
        let repository = try Repository(at: clone)
        let theirs = directory.path("theirs")
        switch shape {
        case "dot-dot", ".GIT", "git~1", ".g\u{200C}it":
            expectCode(.notPermitted) { try repository.checkoutHeadIntoEmptyFolder() }
            #expect(!FileManager.default.fileExists(atPath: clone.appendingPathComponent(".git/hooks/post-checkout").path))
        case "two spellings, no link", "empty folder", "empty tree", "neighbours":
            // Written by Cohort as git writes them: two spellings of `é` are two folders on Linux, an
            // empty tree makes no folder, and names around `a/` keep git's order.
            #expect(try CheckoutPlan(repository, tree: repository.tree(ofCommit: repository.commit(named: "HEAD"))).forLibgit2 == nil)
            #expect(try repository.checkoutHeadIntoEmptyFolder() == .cohort)
            #expect(try Self.git(["clone", "-q", source.path, theirs.path], in: directory.url).status == 0)
            #expect(try Self.listing(clone) == Self.listing(theirs))
            #expect(try Self.git(["ls-files", "-s"], in: clone).stdout == Self.git(["ls-files", "-s"], in: theirs).stdout)
            #expect(try Self.git(["status", "--porcelain"], in: clone).stdout.isEmpty)
        default:
            // The plan leaves the tree to libgit2's checkout, for its own reason, and libgit2 may write
            // it or refuse it.
            let reasons = ["twice": "a name given twice", "twice apart": "a name given twice", "two spellings": "a name given twice",
                           "mode 100664": "a mode stored otherwise than git writes it", "not UTF-8": "a name that is not UTF-8",
                           "unsorted": "names out of git's order", "empty link": "a link git writes otherwise"]
            #expect(try CheckoutPlan(repository, tree: repository.tree(ofCommit: repository.commit(named: "HEAD"))).forLibgit2 == reasons[shape])
            #expect((try? repository.checkoutHeadIntoEmptyFolder()) != .cohort)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: directory.path("escape").path))
    }
}
