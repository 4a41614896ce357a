import CohortTestSupport
import Foundation
import Testing

/// Debian's Chromium, when this machine has it (`make deps` installs it).
enum Browser {
    static let path: String? = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }
}

/// The pages a person opens from a link, rendered by a real browser (headless Chromium, driven by
/// Tests/Scripts/browser_check.py) on a desktop and on a phone's width.
@Suite("the link page in a real browser", .serialized)
struct LinkPageBrowserTests {
    struct Rendered: Decodable {
        struct Overflow: Decodable { let tag: String; let id: String; let right: Double }
        let title: String
        let link: String?
        let linkRight: Double?
        let scrollWidth: Int
        let clientWidth: Int
        let overflowing: Overflow?
        let width: Int
        let screenshot: String
    }

    /// Screenshots are kept beside the build, for a person to look at.
    static let screenshots = cohortBinary.deletingLastPathComponent().appendingPathComponent("screenshots")

    func render(_ url: String, name: String, widths: [Int] = [1200, 390]) throws -> [Rendered] {
        let folder = Self.screenshots.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let script = testScript("browser_check.py")
        let result = try run("python3", [script.path, Browser.path ?? "chromium", url, folder.path] + widths.map(String.init), in: folder)
        #expect(result.status == 0, "\(result.stderr)")
        return try result.stdout.split(separator: "\n").map { try JSONDecoder().decode(Rendered.self, from: Data($0.utf8)) }
    }

    func expectFits(_ page: Rendered, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(page.scrollWidth <= page.clientWidth, "scrolls sideways at \(page.width) px", sourceLocation: sourceLocation)
        #expect(page.overflowing == nil, "sticks out at \(page.width) px: \(String(describing: page.overflowing))", sourceLocation: sourceLocation)
        let png = (try? Data(contentsOf: URL(fileURLWithPath: page.screenshot))) ?? Data()
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]) && png.count > 5_000, "no screenshot at \(page.screenshot)", sourceLocation: sourceLocation)
    }

    @Test("the link page: its title, the whole link as text, nothing wider than a phone",
          .enabled(if: Browser.path != nil, "no Chromium on this machine: `make deps` installs Debian's chromium"))
    func linkPage() throws {
        let hosted = try Hosted()
        let pages = try render(hosted.link, name: "link")
        #expect(pages.map(\.width) == [1200, 390])
        for page in pages {
            #expect(page.title == "Baking Recipes · Cohort")
            #expect(page.link == hosted.link, "the link as shown: \(page.link ?? "none")")
            #expect((page.linkRight ?? .infinity) <= Double(page.clientWidth), "the link box ends at \(page.linkRight ?? 0) px")
            expectFits(page)
        }
    }

    @Test("the server's home page and its not-found page fit a phone too",
          .enabled(if: Browser.path != nil, "no Chromium on this machine: `make deps` installs Debian's chromium"))
    func otherPages() throws {
        let hosted = try Hosted()
        let home = try render(hosted.server.url + "/", name: "home", widths: [390])
        #expect(home.first?.title == "Cohort server")
        home.forEach { expectFits($0) }
        let missing = try render(hosted.server.url + "/c/no-such-collaboration-" + String(repeating: "x", count: 80), name: "not-found", widths: [390])
        #expect(missing.first?.title == "Not here · Cohort")
        missing.forEach { expectFits($0) }
        // Outside /c/ too: the same page, not an empty answer.
        let elsewhere = try render(hosted.server.url + "/some/where/else", name: "elsewhere", widths: [390])
        #expect(elsewhere.first?.title == "Not here · Cohort")
    }
}
