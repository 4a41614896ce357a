import CohortIdentity
import Foundation

extension Repository {
    /// Whether `url` is reached through git's local transport (a path or `file://`), where libgit2
    /// writes into the other repository itself and none of its hooks run.
    public static func isLocalRemote(_ url: String) -> Bool {
        url.hasPrefix("/") || url.hasPrefix("file://") || url.hasPrefix("./") || url.hasPrefix("../") || url.hasPrefix("~")
            || (!url.contains("://") && !url.contains(":"))
    }

    /// The folder a local remote (`isLocalRemote`) names, `file://` and `~` resolved; nil for any other URL.
    public static func localPath(ofRemote url: String) -> String? {
        guard isLocalRemote(url) else { return nil }
        return url.hasPrefix("file://") ? String(url.dropFirst("file://".count)) : (url as NSString).expandingTildeInPath
    }

    /// Pushes with stock `git push`, so that the receiving repository's `receive-pack` runs its hooks
    /// (Cohort's verifying `pre-receive` among them). Refused refs and the hooks' messages are read
    /// from git's porcelain output.
    public func pushWithGit(remote: String, refspecs: [String], git: String? = GitCommand.executable) throws -> PushResult {
        guard let directory = workingDirectory ?? Optional(gitDirectory) else {
            throw CohortError(.git, "no directory to push from")
        }
        guard let git else { throw CohortError(.git, "cannot push to \(remote): git is not installed", hint: "install git") }
        try flushObjects()
        let run = try GitCommand.run(["push", "--porcelain", remote] + refspecs, in: directory, git: git)
        let stderr = String(decoding: run.errors.prefix(64 << 10), as: UTF8.self)
        let messages = stderr.split(separator: "\n").map(String.init).filter { $0.hasPrefix("remote: ") }
            .map { String($0.dropFirst("remote: ".count)).trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        var refused: [PushRefusal] = []
        for line in String(decoding: run.output, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count >= 3, fields[0] == "!" else { continue }
            let ref = fields[1].split(separator: ":").last.map(String.init) ?? String(fields[1])
            refused.append(PushRefusal(ref: ref, reason: String(fields[2])))
        }
        if run.status != 0, refused.isEmpty {
            let reason = stderr.split(separator: "\n").last(where: { $0.hasPrefix("fatal:") || $0.hasPrefix("error:") }) ?? "git push failed"
            throw CohortError(.git, "cannot push to \(remote): \(reason)",
                              hint: "check the remote (`git remote -v`); your commits stay here and the next sync pushes them")
        }
        return PushResult(refused: refused, remoteMessages: messages)
    }
}

extension Repository {
    /// `git gc --auto --quiet`: packs loose objects once there are many (libgit2 writes every object
    /// loose, and thousands of them slow every transfer down). git does the work in the background
    /// when it is needed and returns at once when it is not; a failure only costs speed.
    public func packWhenNeeded() {
        // git's own estimate, without starting a process for it: loose objects in `objects/17` times
        // 256 against gc.auto (6700), and the number of packs against gc.autoPackLimit (50).
        let objects = gitDirectory.appendingPathComponent("objects")
        let loose = ((try? FileManager.default.contentsOfDirectory(atPath: objects.appendingPathComponent("17").path)) ?? []).count
        let packs = ((try? FileManager.default.contentsOfDirectory(atPath: objects.appendingPathComponent("pack").path)) ?? [])
            .filter { $0.hasSuffix(".pack") }.count
        guard loose * 256 > 6700 || packs > 50 else { return }
        guard let git = GitCommand.executable else { return }
        _ = try? GitCommand.run(["--git-dir", gitDirectory.path, "gc", "--auto", "--quiet"], in: gitDirectory, git: git, collect: false)
    }
}
