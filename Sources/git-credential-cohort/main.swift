// git-credential-cohort: git's credential helper for Cohort servers.
//
//     git config --global credential.helper cohort
//     git config --global credential.useHttpPath true
//
// For `get` on an http(s) URL of a collaboration (`…/c/<identifier>`) served by Cohort, it fetches a
// challenge, signs it with this device's key (from $COHORT_HOME), and answers with a short-lived
// token as the password: a push token when this participant may push, else a pull token. Hosts that
// are not Cohort servers, and every other operation (`store`, `erase`), get no answer, so git moves
// on to its other helpers. A refusal (not a participant, removed) is printed and ends git's asking.
import CohortBase
import CohortIdentity
import CohortRemote
import CohortServerAPI
import Foundation

/// Largest input git may send, in bytes.
let maxInputBytes = 64 << 10

func note(_ text: String) {
    FileHandle.standardError.write(Data("cohort: \(text)\n".utf8))
}

func readRequest() -> [String: String] {
    var fields: [String: String] = [:]
    let data = FileHandle.standardInput.readData(ofLength: maxInputBytes)
    for line in String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false) {
        if line.isEmpty { break }
        guard let equals = line.firstIndex(of: "=") else { continue }
        fields[String(line[..<equals])] = String(line[line.index(after: equals)...])
    }
    return fields
}

/// The collaboration link git asks about, when the request names one.
func link(of request: [String: String]) -> CollaborationLink? {
    guard let scheme = request["protocol"], scheme == "http" || scheme == "https", let host = request["host"],
          let path = request["path"]
    else { return nil }
    return try? CollaborationLink("\(scheme)://\(host)/\(path)")
}

func credential(_ token: ServerAPI.TokenResponse) -> String {
    "username=cohort\npassword=\(token.token)\npassword_expiry_utc=\(Int(token.expiresAt.timeIntervalSince1970))\n"
}

/// A token bought earlier (and only ever bought from a Cohort server), without starting anything
/// asynchronous: git runs the helper for every command.
func cachedAnswer(_ request: [String: String]) -> String? {
    guard let link = link(of: request), let cached = TokenCache(home: IdentityHome.fromEnvironment()).tokenForGit(link) else { return nil }
    return credential(cached)
}

func answer(_ request: [String: String]) async -> String? {
    guard let scheme = request["protocol"], scheme == "http" || scheme == "https", let host = request["host"] else { return nil }
    let home = IdentityHome.fromEnvironment()
    let client = ServerClient()
    defer { Task { await client.shutdown() } }
    guard let path = request["path"] else {
        if await client.serverInfo(base: "\(scheme)://\(host)") != nil {
            note("\(host) is a Cohort server, but git did not say which collaboration; run `git config --global credential.useHttpPath true`")
        }
        return nil
    }
    guard let link = try? CollaborationLink("\(scheme)://\(host)/\(path)"), await client.serverInfo(base: link.base) != nil else {
        return nil
    }
    let exchange = TokenExchange(home: home, client: client)
    do {
        let token: ServerAPI.TokenResponse
        do {
            token = try await exchange.token(link, operation: .push)
        } catch let error as CohortError where error.code == .notPermitted {
            token = try await exchange.exchange(link, operation: .pull)
            TokenCache(home: home).store(token, for: link, pushRefused: true)
        }
        return credential(token)
    } catch let error as CohortError {
        note("error: \(error.description)")
        // This host is Cohort's and said no: asking other helpers or the terminal cannot help.
        return error.code == .network ? nil : "quit=1\n"
    } catch {
        note("error: \(error)")
        return nil
    }
}

let usage = """
    usage: git-credential-cohort get|store|erase     (run by git, reading its request on standard input)
           git-credential-cohort --help | --version

    git's credential helper for Cohort servers. Set it up once:
        git config --global credential.helper cohort
        git config --global credential.useHttpPath true
    For a collaboration's URL on a Cohort server, `get` answers with a short-lived token bought with
    this device's identity ($COHORT_HOME, else ~/.config/cohort); other hosts get no answer. See
    Docs/Server.md.

    """

let action = CommandLine.arguments.dropFirst().last ?? ""
switch action {
case "--help", "-h", "help":
    FileHandle.standardOutput.write(Data(usage.utf8))
case "":
    FileHandle.standardError.write(Data(usage.utf8))
    exit(64)
case "--version", "version":
    print("git-credential-cohort \(CohortVersion.text)")
case let option where option.hasPrefix("-"):
    FileHandle.standardError.write(Data("error: E_USAGE: unknown option \(option.prefix(40)) (see 'git-credential-cohort --help')\n".utf8))
    exit(64)
case "get":
    let request = readRequest()
    if let text = cachedAnswer(request) {
        FileHandle.standardOutput.write(Data(text.utf8))
    } else if let text = await answer(request) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
case "erase":
    // git says the server refused this token: forget it, so the next `get` buys a new one.
    if let link = link(of: readRequest()) {
        TokenCache(home: IdentityHome.fromEnvironment()).remove(for: link)
    }
case "store":
    // The helper keeps the tokens it bought itself; git has nothing to add.
    _ = readRequest()
default:
    // Operations git may add later are ignored without a word, as git's protocol asks.
    break
}
