import CohortCollaboration
import CohortIdentity
import Foundation
import HTTPTypes
import Hummingbird

/// The collaboration link, `/c/<id>`: a small page for a browser, `LinkInfo` for a client asking for
/// `application/json`.
extension CohortServer {
    func addLinkRoutes(to router: Router<ServerContext>) {
        router.get("/c/:id") { [self] request, context in
            let wantsJSON = request.headers[.accept]?.contains("application/json") ?? false
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
                return wantsJSON ? jsonResponse(info) : htmlResponse(LinkPage.html(info), status: .ok)
            } catch {
                let error = ErrorResponses.cohortError(error, logger: context.logger)
                return wantsJSON ? ErrorResponses.json(error)
                    : htmlResponse(LinkPage.notFound(error), status: error.httpStatus)
            }
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

/// The HTML of a link: title, initiator, participants, and how to join. Every value is escaped.
enum LinkPage {
    static func html(_ info: ServerAPI.LinkInfo) -> String {
        let title = escape(info.title)
        let initiator = "\(escape(info.initiator.name)) (@\(escape(info.initiator.handle)))"
        let participants = info.participants.map { "\($0) participant\($0 == 1 ? "" : "s")" } ?? "not pushed yet"
        let link = escape(info.link)
        return """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
        <title>\(title) · Cohort</title>
        <style>body{font:16px/1.5 system-ui,sans-serif;max-width:40em;margin:3em auto;padding:0 1em;color:#222}
        code,pre{background:#f4f4f4;padding:.1em .3em;border-radius:3px}pre{padding:.8em;overflow-x:auto}
        .meta{color:#555}</style></head>
        <body>
        <h1>\(title)</h1>
        <p class="meta">Started by \(initiator) · \(participants)</p>
        <h2>How to join</h2>
        <ol>
        <li>Make your identity once: <code>cohort id init --handle you --name "Your Name"</code></li>
        <li>Send your card (<code>cohort id card</code>) to \(escape(info.initiator.name)); they add you with
        <code>cohort participants add</code>.</li>
        <li>Then clone: <pre>cohort clone \(link)</pre> or with git itself:
        <pre>git config --global credential.helper cohort
        git config --global credential.useHttpPath true
        git clone \(link)</pre></li>
        </ol>
        <p class="meta">Only participants can pull or push: each request is answered with a proof of identity
        signed by one of their devices.</p>
        </body></html>

        """
    }

    static func notFound(_ error: CohortError) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>Not here · Cohort</title></head>
        <body><h1>Not here</h1><p>\(escape(error.description))</p></body></html>

        """
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
