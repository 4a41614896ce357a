import CohortIdentity
import Foundation

extension Repository {
    /// Whether `url` is reached through git's local transport (a path or `file://`), where libgit2
    /// writes into the other repository itself and none of its hooks run.
    public static func isLocalRemote(_ url: String) -> Bool {
        url.hasPrefix("/") || url.hasPrefix("file://") || url.hasPrefix("./") || url.hasPrefix("../") || url.hasPrefix("~")
            || (!url.contains("://") && !url.contains(":"))
    }

    /// Pushes with stock `git push`, so that the receiving repository's `receive-pack` runs its hooks
    /// (Cohort's verifying `pre-receive` among them). Refused refs and the hooks' messages are read
    /// from git's porcelain output.
    public func pushWithGit(remote: String, refspecs: [String], git: String = "/usr/bin/git") throws -> PushResult {
        guard let directory = workingDirectory ?? Optional(gitDirectory) else {
            throw CohortError(.git, "no directory to push from")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: FileManager.default.isExecutableFile(atPath: git) ? git : "/usr/bin/env")
        process.arguments = (process.executableURL?.path == git ? [] : ["git"]) + ["push", "--porcelain", remote] + refspecs
        process.currentDirectoryURL = directory
        var environment = ProcessInfo.processInfo.environment
        environment["GIT_TERMINAL_PROMPT"] = "0"
        environment["LC_ALL"] = "C"
        process.environment = environment
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw CohortError(.git, "cannot run git to push: \(error)", hint: "install git")
        }
        let collected = ErrorText()
        let reader = Thread { collected.set(errors.fileHandleForReading.readDataToEndOfFile()) }
        reader.start()
        let standardOutput = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let stderr = String(decoding: collected.wait().prefix(64 << 10), as: UTF8.self)
        let messages = stderr.split(separator: "\n").map(String.init).filter { $0.hasPrefix("remote: ") }
            .map { String($0.dropFirst("remote: ".count)).trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        var refused: [PushRefusal] = []
        for line in String(decoding: standardOutput, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count >= 3, fields[0] == "!" else { continue }
            let ref = fields[1].split(separator: ":").last.map(String.init) ?? String(fields[1])
            refused.append(PushRefusal(ref: ref, reason: String(fields[2])))
        }
        if process.terminationStatus != 0, refused.isEmpty {
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
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git", "--git-dir", gitDirectory.path, "gc", "--auto", "--quiet"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return }
        process.waitUntilExit()
    }
}

/// Standard error read on another thread, so neither pipe can fill up and block git.
private final class ErrorText: @unchecked Sendable {
    private let condition = NSCondition()
    private var data: Data?

    func set(_ value: Data) {
        condition.lock()
        data = value
        condition.signal()
        condition.unlock()
    }

    func wait() -> Data {
        condition.lock()
        defer { condition.unlock() }
        while data == nil { condition.wait() }
        return data ?? Data()
    }
}
