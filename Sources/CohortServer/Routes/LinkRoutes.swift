import CohortBase
import CohortServerAPI
import Foundation
import HTTPTypes
import Hummingbird

/// The collaboration link, `/c/<id>`: a small page for a browser, `LinkInfo` for a client asking for
/// `application/json`.
extension CohortServer {
    func addLinkRoutes(to router: Router<ServerContext>) {
        router.get("/c/:id") { [self] request, context in linkResponse(request, context) }
        router.get("/") { [self] _, _ in homeResponse() }
        // Link previewers ask with HEAD first: the same status and headers, no body.
        router.head("/c/:id") { [self] request, context in Self.headOnly(linkResponse(request, context)) }
        router.head("/") { [self] _, _ in Self.headOnly(homeResponse()) }
        // Any other address: the not-found page (JSON for a client asking for it), never an empty 404.
        // (Under /c the router matches by segment first, so the paths below /c are named too.)
        for path in ["**", "/c", "/c/:id/**"] {
            router.get(RouterPath(path)) { [self] request, _ in notFoundResponse(request) }
            router.head(RouterPath(path)) { [self] request, _ in Self.headOnly(notFoundResponse(request)) }
        }
    }

    func notFoundResponse(_ request: Request) -> Response {
        let error = CohortError(.notFound, "there is nothing at this address on this Cohort server",
                                hint: "collaborations are at /c/<identifier>; check the link with the person who sent it")
        return errorResponse(error, for: request)
    }

    /// A refusal as JSON for a client that asks for it, else as the "Not here" page with its status.
    func errorResponse(_ error: CohortError, for request: Request) -> Response {
        Self.wantsJSON(request) ? ErrorResponses.json(error) : htmlResponse(LinkPage.notFound(error), status: error.httpStatus)
    }

    /// A client asking for `application/json` (ours do) gets JSON; a browser gets a page.
    static func wantsJSON(_ request: Request) -> Bool {
        request.headers[.accept]?.contains("application/json") ?? false
    }

    func homeResponse() -> Response {
        htmlResponse(LinkPage.home(server: name, version: CohortVersion.text), status: .ok)
    }

    static func headOnly(_ response: Response) -> Response {
        var response = response
        response.body = ResponseBody()
        return response
    }

    func linkResponse(_ request: Request, _ context: ServerContext) -> Response {
        do {
            let identifier = context.parameters.get("id") ?? ""
            guard (try? ServerAPI.checkHostable(identifier)) != nil else {
                throw CohortError(.notFound, "no collaboration is hosted at this address")
            }
            let membership = try members.current(identifier)
            let link = link(identifier)
            let info = ServerAPI.LinkInfo(
                identifier: identifier, title: membership.title, initiator: membership.initiator, gitURL: link, link: link,
                participants: membership.head == nil ? nil : membership.activeCount
            )
            return Self.wantsJSON(request) ? jsonResponse(info) : htmlResponse(LinkPage.html(info), status: .ok)
        } catch {
            return errorResponse(ErrorResponses.cohortError(error, logger: context.logger), for: request)
        }
    }

    func htmlResponse(_ html: String, status: HTTPResponse.Status) -> Response {
        Response(status: status, headers: [
            .contentType: "text/html; charset=utf-8", .cacheControl: "no-store",
            .contentSecurityPolicy: "default-src 'none'; style-src 'unsafe-inline'",
            HTTPField.Name("X-Content-Type-Options")!: "nosniff",
        ], body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }
}

/// The HTML of a link (title, initiator, participants, what Cohort is and how to join), of the
/// server's own page and of "not here". Every value is escaped; long links wrap instead of scrolling.
enum LinkPage {
    static let style = """
        <style>body{font:16px/1.5 system-ui,sans-serif;max-width:40em;margin:2em auto;padding:0 1em;color:#222;overflow-wrap:anywhere}
        code,pre{background:#f4f4f4;border-radius:3px;font-size:.95em}code{padding:.1em .3em}
        pre{padding:.7em .8em;white-space:pre-wrap;word-break:break-all;user-select:all}
        .meta{color:#555}.about{background:#f7f7fb;border-left:3px solid #88a;padding:.6em .9em}</style>
        """

    static func page(title: String, body: String) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(title)</title>
        \(style)</head>
        <body>
        \(body)
        </body></html>

        """
    }

    static let about = """
        <p class="about"><b>Cohort</b> keeps a shared folder in a git repository that only its participants can
        read or change: each person is known by a key on their own devices, every change is signed, and
        every copy checks every change. To get it, build it from its source on Linux with Swift 6
        (<code>make deps</code>, then <code>swift build -c release</code>; its README says more) and put
        <code>cohort</code> and <code>git-credential-cohort</code> on your <code>PATH</code>.</p>
        """

    static func html(_ info: ServerAPI.LinkInfo) -> String {
        let title = escape(info.title)
        let initiator = "\(escape(info.initiator.name)) (\(escape(info.initiator.handle)))"
        let participants = info.participants.map { "\($0) participant\($0 == 1 ? "" : "s")" } ?? "not pushed yet"
        let link = escape(info.link)
        return page(title: "\(title) · Cohort", body: """
            <h1>\(title)</h1>
            <p class="meta">A Cohort collaboration started by \(initiator) · \(participants)</p>
            <p>Its link (select it to copy):</p>
            <pre id="link">\(link)</pre>
            \(about)
            <h2>How to join</h2>
            <ol>
            <li>Make your identity once, on this device: <code>cohort id init --handle you@example.com --name "Your Name"</code></li>
            <li>Send your card (<code>cohort id card --output card.json</code>) to \(escape(info.initiator.name)),
            who adds you with <code>cohort participants add card.json --push</code>.</li>
            <li>Then clone it: <pre>cohort clone \(link)</pre> or with git itself:
            <pre>git config --global credential.helper cohort
            git config --global credential.useHttpPath true
            git clone \(link)</pre></li>
            </ol>
            <p class="meta">Only participants can pull or push: each request is answered with a proof of identity
            signed by one of their devices.</p>
            """)
    }

    static func home(server: String, version: String) -> String {
        page(title: "Cohort server", body: """
            <h1>A Cohort server</h1>
            <p class="meta">\(escape(server)) · Cohort \(escape(version))</p>
            \(about)
            <p>Collaborations hosted here are reached by their links, <code>\(escape(server))/c/…</code>, which their
            owners share. Nothing is listed here: a link is the way in.</p>
            """)
    }

    static func notFound(_ error: CohortError) -> String {
        page(title: "Not here · Cohort", body: """
            <h1>Not here</h1>
            <p>\(escape(error.reason))</p>
            <p class="meta">Check the link with the person who sent it. (\(escape(error.code.rawValue)))</p>
            """)
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
