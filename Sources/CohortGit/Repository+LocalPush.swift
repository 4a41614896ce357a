import CohortBase
import Foundation
import Synchronization

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

    /// `url` as this repository reaches it: a relative folder (`../server.git`) is taken from the top of
    /// the working directory (the git directory, when bare), as git takes it, not from wherever the
    /// process runs; any other URL is returned as it is.
    public func absoluteRemoteURL(_ url: String) -> String {
        guard let path = Self.localPath(ofRemote: url), !path.hasPrefix("/") else { return url }
        return (workingDirectory ?? gitDirectory).appendingPathComponent(path).standardizedFileURL.path
    }

    /// Pushes with stock `git push`, so that the receiving repository's `receive-pack` runs its hooks
    /// (Cohort's verifying `pre-receive` among them). Refused refs and the hooks' messages are read
    /// from git's porcelain output.
    public func pushWithGit(remote: String, refspecs: [String], git: String? = GitCommand.executable,
                            progress: (@Sendable (TransferProgress) -> Void)? = nil) throws -> PushResult {
        guard let directory = workingDirectory ?? Optional(gitDirectory) else {
            throw CohortError(.git, "no directory to push from")
        }
        guard let git else { throw CohortError(.git, "cannot push to \(remote): git is not installed", hint: "install git") }
        try flushObjects()
        // With a progress callback, git reports "Writing objects: 45% (9/20), 1.20 MiB | …" as it sends.
        let run = try GitCommand.run(["push", "--porcelain"] + (progress == nil ? [] : ["--progress"]) + [remote] + refspecs,
                                     in: directory, git: git, errorOutput: progress.map(Self.pushProgressReader))
        let stderr = String(decoding: run.errors, as: UTF8.self)
        // The hooks' lines, at most 64 KiB of them; git's own progress ("Resolving deltas: 50% (1/2)",
        // redrawn after \r) is not a message, and is dropped before the cap so that a long push's
        // progress never crowds out the hook's reasons, which come after it.
        var messages: [String] = []
        var kept = 0
        for line in stderr.split(whereSeparator: \.isNewline) where line.hasPrefix("remote: ") && kept < 64 << 10 {
            let text = line.dropFirst("remote: ".count).trimmingCharacters(in: .whitespaces)
            if !text.isEmpty, text.range(of: #"^[A-Za-z][A-Za-z ]*: +[0-9]+% \("#, options: .regularExpression) == nil {
                messages.append(text)
                kept += text.utf8.count
            }
        }
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
    /// Reads git's "Writing objects: P% (N/T), SIZE" lines (ended by carriage returns, possibly split
    /// across chunks) into `.sending` progress.
    static func pushProgressReader(_ progress: @escaping @Sendable (TransferProgress) -> Void) -> @Sendable (Data) -> Void {
        let pending = Mutex(Data())
        return { chunk in
            let lines: [String] = pending.withLock { buffer in
                buffer.append(chunk)
                guard let last = buffer.lastIndex(where: { $0 == 0x0D || $0 == 0x0A }) else { return [] }
                let complete = buffer[..<last]
                buffer = Data(buffer[buffer.index(after: last)...])
                return String(decoding: complete, as: UTF8.self).split(whereSeparator: \.isNewline).map(String.init)
            }
            for line in lines {
                guard line.hasPrefix("Writing objects:"), let open = line.firstIndex(of: "("), let slash = line.firstIndex(of: "/"),
                      let close = line.firstIndex(of: ")"), open < slash, slash < close,
                      let current = Int(line[line.index(after: open)..<slash]), let total = Int(line[line.index(after: slash)..<close])
                else { continue }
                progress(TransferProgress(.sending, current: current, total: total, bytes: Self.bytes(in: line[close...])))
            }
        }
    }

    /// The size git prints after the counts (", 1.20 MiB | 3.00 MiB/s"), in bytes; 0 when none.
    static func bytes(in text: Substring) -> Int {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "|" })
        guard let index = words.firstIndex(where: { ["bytes", "KiB", "MiB", "GiB"].contains($0) }), index > words.startIndex,
              let value = Double(words[words.index(before: index)]) else { return 0 }
        let scales: [String: Double] = ["bytes": 1, "KiB": 1024, "MiB": 1_048_576, "GiB": 1_073_741_824]
        let scale = scales[String(words[index])] ?? 1
        return Int(value * scale)
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
