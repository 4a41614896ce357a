import CohortBase
import CohortGit
import CohortVerification
import Foundation
import Synchronization

/// `cohort hook serve`: the pre-receive verification in a process that stays running, asked by
/// `cohort-hook-client` over a Unix socket. A hook started for each push pays for starting a program,
/// initialising libgit2 and making the pusher's tables of multiples before it checks anything (most
/// of a one-commit push's hook: Docs/Benchmarks.md); here those are paid once. It runs exactly
/// `PreReceiveHook.verdict`, the code the hook runs itself, on the repository and object folders the
/// hook names. It answers only processes of its own user, and the client only trusts a verifier of
/// its own user: a socket either side could not have served itself is never used. Whatever it
/// cannot answer (another version, too busy, a request it does not read) it answers `elsewhere`,
/// and the client hands the push to the hook program as if no verifier were running.
public final class ResidentVerifier: Sendable {
    public let socket: URL
    private let listener: Int32
    /// The socket file as made: removed at the stop only if it is still this one.
    private let identity: FileStamp?
    private let slots: DispatchSemaphore
    private let slotCount: Int
    /// This process's HOME and XDG_CONFIG_HOME ("" when unset): where libgit2 finds the user's git
    /// configuration, the push limits among it. A hook whose own differ verifies its push itself.
    private let configurationHome: [String]
    private let stopped = Atomic<Bool>(false)
    #if os(Linux)
    /// The packs of pushes to repositories it served, read while git indexes them.
    private let incoming: IncomingPacks?
    #endif
    /// Pushes verified (accepted or refused) since the start.
    public let answered = Atomic<Int>(0)
    /// The program this verifier runs as, and its file as it was at the start: once it is replaced (an
    /// upgrade in place), pushes are handed back to the hooks and the verifier ends.
    private let program: URL?
    private let programStamp: FileStamp?
    /// Why the verifier ended on its own (its socket or its program replaced); nil when `stop()` ended it.
    public let endedBecause = Mutex<String?>(nil)
    /// How often the verifier looks whether its socket and its program are still its own (and on
    /// every push).
    static let lookSeconds: Int32 = 2
    /// How long a stopping verifier waits for the pushes in hand.
    static let finishSeconds = 10
    /// The variables the client never sends and leaves to the hook program, even empty (main.c's list):
    /// a server whose environment holds one has every push verified by the hook program.
    public static let variablesLeftToTheHook = ["GIT_NAMESPACE", "GIT_COMMON_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE",
                                                "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM"]
    /// The longest path a Unix socket may be bound at (the room in `sockaddr_un`, less its final zero).
    public static let maxSocketPathBytes = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1
    /// How long one request may take to arrive, or its reply to leave.
    static let transferSeconds = 10
    /// Maps of pack files kept between pushes (a repository's packs and their indexes).
    static let keptPackMaps = 64
    /// Trees kept between pushes (those the last pushes read: the next push's parent's).
    static let keptTreeBytes = 32 << 20

    /// Listens at `socket` (mode 0600). A stale socket left by a verifier that ended is replaced; a
    /// live one, or any other file there, is refused, and so is a folder on a network file system
    /// (another machine's verifier could not be reached there, so it would be taken for stale). At
    /// most `concurrentPushes` pushes are verified at once; others are answered `elsewhere` at once.
    /// `program`: the file this verifier runs as; the verifier ends once it is replaced.
    public init(socket: URL, concurrentPushes: Int = 4, program: URL? = nil) throws {
        let path = socket.path
        guard path.utf8.count <= Self.maxSocketPathBytes else {
            throw CohortError(.usage, "the socket path \(path) is longer than \(Self.maxSocketPathBytes) bytes",
                              hint: "choose a shorter path, such as /run/cohort/verifier.sock")
        }
        if let kind = GitRuntime.networkFileSystem(holding: socket.deletingLastPathComponent().path) {
            throw CohortError(.usage, "the socket's folder \(socket.deletingLastPathComponent().path) is on a network file system (\(kind)), where a verifier on another machine would be taken for a stale one",
                              hint: "choose a path on this machine's own disk, such as /run/cohort/verifier.sock")
        }
        self.program = program
        programStamp = program.flatMap(FileStamp.init)
        if let program, programStamp == nil {
            throw CohortError(.io, "cannot read the program file it runs as, \(program.path)", hint: "start it from the installed binary")
        }
        var status = stat()
        if lstat(path, &status) == 0 {
            guard status.st_mode & S_IFMT == S_IFSOCK else {
                throw CohortError(.io, "\(path) exists and is not a socket", hint: "choose another path, or move that file away")
            }
            let probe = Self.connection(to: path)
            if probe >= 0 {
                close(probe)
                throw CohortError(.busy, "a resident verifier already answers at \(path)", hint: "stop it first, or choose another path")
            }
            unlink(path)
        }
        let fd = unixStreamSocket()
        guard fd >= 0 else { throw CohortError(.io, "cannot make a socket: \(String(cString: strerror(errno)))", hint: "check the system's limits") }
        var address = Self.address(path)
        // Made 0600 as it is created, not changed after (a chmod follows a link put in its place).
        let mask = umask(0o177)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        umask(mask)
        guard bound == 0, listen(fd, 64) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw CohortError(.io, "cannot listen at \(path): \(reason)", hint: "check that its folder exists and is writable")
        }
        self.socket = socket
        listener = fd
        GitRuntime.keepPackMaps(Self.keptPackMaps)
        GitRuntime.keepFreedMemory()
        GitRuntime.keepTrees(bytes: Self.keptTreeBytes)
        identity = FileStamp(socket)
        slotCount = max(1, concurrentPushes)
        slots = DispatchSemaphore(value: slotCount)
        #if os(Linux)
        incoming = IncomingPacks()
        #endif
        let environment = ProcessInfo.processInfo.environment
        configurationHome = [environment["HOME"] ?? "", environment["XDG_CONFIG_HOME"] ?? ""]
    }

    /// Accepts and answers requests until `stop()`, or until its socket or its program is replaced
    /// (`endedBecause` says which).
    public func run() {
        var lastLook = ContinuousClock.now
        while !stopped.load(ordering: .acquiring) {
            // Looked at every 2 s whatever arrives: a stream of requests answered `elsewhere` before
            // any verification (another version, busy) must not keep a replaced program answering.
            if ContinuousClock.now - lastLook >= .seconds(Int(Self.lookSeconds)) {
                lastLook = ContinuousClock.now
                if let reason = replaced() {
                    stop(because: reason)
                    break
                }
            }
            var ready = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            let polled = poll(&ready, 1, Self.lookSeconds * 1000)
            if polled == 0 || (polled < 0 && errno == EINTR) { continue }
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else {
                if errno == EINTR || errno == ECONNABORTED { continue }
                if stopped.load(ordering: .acquiring) { break }
                // Out of descriptors, say: wait a little rather than spin; the clients meanwhile verify themselves.
                usleep(10_000)
                continue
            }
            _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
            #if !os(Linux)
            var one: Int32 = 1
            setsockopt(connection, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
            #endif
            guard Self.peerUser(connection) == geteuid() else {
                close(connection)
                continue
            }
            var limit = timeval(tv_sec: Self.transferSeconds, tv_usec: 0)
            setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
            guard slots.wait(timeout: .now()) == .success else {
                reply(connection, .elsewhere, "")
                close(connection)
                continue
            }
            // The verification runs on this thread as it runs on a hook's main thread: give it as much stack.
            let thread = Thread { [self] in
                answer(connection)
                close(connection)
                slots.signal()
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
        // The pushes in hand are answered before the process may end (an answer cut off is verified
        // again by the hook; a process ending under libgit2's threads is not a clean end).
        let deadline = DispatchTime.now() + .seconds(Self.finishSeconds)
        var taken = 0
        while taken < slotCount, slots.wait(timeout: deadline) == .success { taken += 1 }
        // Given back: libdispatch refuses to free a semaphore below the value it was made with.
        for _ in 0..<taken { slots.signal() }
    }

    deinit {
        close(listener)
    }

    /// Why this verifier should no longer answer, if it should not: its socket file is no longer the
    /// one it listens at (removed, or another verifier's), or its program's file changed.
    private func replaced() -> String? {
        if let identity, !identity.isSameFile(as: FileStamp(socket)) {
            return "the socket \(socket.path) was removed or replaced, perhaps by another verifier"
        }
        if let program, FileStamp(program) != programStamp {
            return "its program \(program.path) was replaced, by an upgrade say"
        }
        return nil
    }

    /// Stops accepting, and removes the socket if it is still this verifier's. `run` returns once the
    /// pushes being verified are answered (at most 10 s later); a client cut off verifies its push itself.
    public func stop() {
        stop(because: nil)
    }

    /// Stops as `stop()`; `reason`, when the verifier ends on its own, is kept in `endedBecause` only
    /// if this call is the one that stops it (a stop already under way is no ending on its own).
    private func stop(because reason: String?) {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        if let reason { endedBecause.withLock { $0 = reason } }
        // The file first: once `run` wakes, the process may end before this thread goes on.
        if identity?.isSameFile(as: FileStamp(socket)) == true { unlink(socket.path) }
        // Wakes `run` from `poll`; the socket is closed when the verifier is freed, so that no
        // descriptor is closed under a `shutdown` still to come.
        shutdown(listener, Int32(SHUT_RDWR))
        #if os(Linux)
        incoming?.stop()
        #endif
    }

    private func answer(_ connection: Int32) {
        let fields: [Data]
        do {
            var incoming = Incoming(connection)
            fields = try HookWire.decodeRequest { try incoming.read($0) }
        } catch {
            return
        }
        // Paths and words exactly as sent: one that is not UTF-8 is left to the hook.
        let words = fields.dropLast().compactMap { String(bytes: $0, encoding: .utf8) }
        guard words.count == fields.count - 1, words[1] == CohortVersion.text, Array(words[6...7]) == configurationHome,
              let objects = try? HookObjects(workingDirectory: words[2], gitDirectory: words[3],
                                             objectDirectory: words[4].isEmpty ? nil : words[4], alternates: words[5])
        else {
            reply(connection, .elsewhere, "")
            return
        }
        let updates: [RefUpdate]
        do {
            updates = try PreReceiveHook.updates(from: fields[8])
        } catch {
            answered.add(1, ordering: .relaxed)
            reply(connection, .refuse, PreReceiveHook.Verdict(error).text)
            return
        }
        // A program replaced since the start would verify by other rules than the hook program now
        // does: the push goes back to the hook, and this verifier ends (so does one whose socket is gone).
        if let reason = replaced() {
            reply(connection, .elsewhere, "")
            stop(because: reason)
            return
        }
        // A repository this process cannot open as the hook would is the hook's to verify.
        guard let repository = try? Repository.reopen(.hook(objects), ownPacks: true, keepingTrees: true) else {
            reply(connection, .elsewhere, "")
            return
        }
        #if os(Linux)
        // The push's pack, read while git indexed it: its signatures found checked. Kept until the
        // answer is sent (its results are found only while it lives); later pushes here are watched.
        let early = objects.objectDirectory.flatMap { incoming?.claim(quarantine: $0) }
        #endif
        let verdict = PreReceiveHook.verdict(updates, in: repository)
        answered.add(1, ordering: .relaxed)
        reply(connection, verdict.status == 0 ? .accept : .refuse, verdict.text)
        #if os(Linux)
        withExtendedLifetime(early) {}
        incoming?.watch(objects: repository.objectsDirectory)
        #endif
        // Let go only now: freeing the handle unmaps its packs, which the push need not wait for.
        withExtendedLifetime(repository) {}
    }

    private func reply(_ connection: Int32, _ answer: HookWire.Answer, _ text: String) {
        let message = HookWire.encode([Data(HookWire.replyMagic.utf8), Data(answer.rawValue.utf8), Data(text.utf8)])
        message.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let sent = send(connection, bytes.baseAddress! + offset, bytes.count - offset, noSignal)
                if sent < 0 && errno == EINTR { continue }
                guard sent > 0 else { return }
                offset += sent
            }
        }
    }

    /// The user of the process at the other end of `connection`.
    private static func peerUser(_ connection: Int32) -> uid_t? {
        #if os(Linux)
        // Linux's `struct ucred` (pid, uid, gid), which Swift's Glibc module leaves out with the rest of
        // _GNU_SOURCE.
        var credentials: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
        var size = socklen_t(MemoryLayout.size(ofValue: credentials))
        guard getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &credentials, &size) == 0, size == MemoryLayout.size(ofValue: credentials) else { return nil }
        return credentials.uid
        #else
        var user = uid_t(), group = gid_t()
        return getpeereid(connection, &user, &group) == 0 ? user : nil
        #endif
    }

    private static func address(_ path: String) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            let bytes = Array(path.utf8)
            buffer.copyBytes(from: bytes.prefix(buffer.count - 1))
        }
        return address
    }

    /// A connection to `path`, or -1.
    private static func connection(to path: String) -> Int32 {
        let fd = unixStreamSocket()
        guard fd >= 0 else { return -1 }
        var address = address(path)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            return -1
        }
        return fd
    }
}

/// A request as it arrives, read in as few `recv` calls as it allows (a request is a few hundred
/// bytes: one call, where reading field by field took seventeen).
private struct Incoming {
    let connection: Int32
    private var buffer = [UInt8](repeating: 0, count: 16 << 10)
    private var start = 0
    private var end = 0

    init(_ connection: Int32) {
        self.connection = connection
    }

    /// Exactly `count` bytes, or an error (the peer went, or took longer than `transferSeconds`).
    mutating func read(_ count: Int) throws -> Data {
        var data = Data(capacity: count)
        while data.count < count {
            if start == end {
                let got = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress!, $0.count, 0) }
                if got < 0 && errno == EINTR { continue }
                guard got > 0 else { throw CohortError(.io, "the request stopped short", hint: "send requests as cohort-hook-client does") }
                (start, end) = (0, got)
            }
            let taken = min(count - data.count, end - start)
            data.append(contentsOf: buffer[start..<(start + taken)])
            start += taken
        }
        return data
    }
}

/// A Unix stream socket, closed on exec; -1 on failure.
private func unixStreamSocket() -> Int32 {
    #if os(Linux)
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    #else
    let fd = socket(AF_UNIX, SOCK_STREAM, 0)
    #endif
    if fd >= 0 { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    return fd
}

/// `send` flags: a client that went away must not end the verifier with SIGPIPE.
#if os(Linux)
private let noSignal = Int32(MSG_NOSIGNAL)
#else
private let noSignal: Int32 = 0
#endif
