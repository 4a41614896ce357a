import CohortGit
import CohortVerification
import Foundation
import Synchronization

#if os(Linux)
/// The packs pushes bring into the repositories a resident verifier serves, read while git still
/// indexes them: the signatures of their commits and notices are checked then (`EarlyChecks`), on a
/// core git leaves idle, and the verification that follows finds them checked (`CheckedAhead`).
///
/// git's `receive-pack` writes a push's pack into a quarantine (`objects/tmp_objdir-incoming-*/pack/
/// tmp_pack_*`) and runs `pre-receive` only once it has indexed the pack and checked that the push
/// is whole: a third of a one-commit push's time, during which the verifier has nothing to do. Through
/// inotify it sees the quarantine appear in a repository it served before, reads the pack as it is
/// written, and names each object itself as a clone does (`PackTee`). A result is kept under the name
/// of the bytes it was computed from, so it is exactly what the verifier would compute: reading ahead
/// moves work and changes no verdict. Failures are never kept.
final class IncomingPacks: @unchecked Sendable {
    /// Object folders watched at most (each a repository served).
    static let maxRepositories = 256
    /// Quarantines followed at once (a push's lives from its pack to the end of its hook).
    static let maxQuarantines = 64
    /// Packs read at once; more pushes at the same moment are verified as usual.
    static let maxPacks = 4
    /// Bytes read of one pack; past them, what was read is what is checked.
    static let maxPackBytes = 64 << 20
    /// Packs left unclaimed for this long (a push git refused before its hook) are let go.
    static let unclaimedSeconds = 120.0

    private let inotify: Int32
    private let state = Mutex(Watches())
    private let stopped = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)

    private struct Watches {
        /// What each watch descriptor watches.
        var watched: [Int32: Watched] = [:]
        /// Object folders watched, by identity: a repository removed and made again at the same path
        /// is another folder, watched anew.
        var repositories: Set<Folder> = []
        /// The quarantines of pushes under way, by folder.
        var quarantines: [Folder: Quarantine] = [:]
    }

    private enum Watched {
        case objects(String, Folder)
        case quarantine(Folder)
        case packFolder(Folder)
    }

    /// A push's quarantine: where the watch found it, its watches, and its pack once found (never
    /// read again once the verifier has claimed it).
    private struct Quarantine {
        let path: String
        var watches: [Int32] = []
        var pack: IncomingPack?
        var claimed = false
    }

    /// A folder by its device and inode: the hook names a quarantine by another path than the watch
    /// found it under (`repo.git/./objects/…`), or through a link.
    struct Folder: Hashable {
        let device: UInt64
        let inode: UInt64

        init?(_ path: String) {
            var status = stat()
            guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else { return nil }
            device = UInt64(status.st_dev)
            inode = UInt64(status.st_ino)
        }
    }

    /// Starts watching; nil where inotify cannot be had (the verifier then reads nothing ahead).
    init?() {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { return nil }
        inotify = fd
        let thread = Thread { [self] in
            runOnlyWhenIdle()
            run()
            done.signal()
        }
        thread.name = "cohort incoming packs"
        thread.start()
    }

    /// Stops watching and lets go of every pack being read.
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        done.wait()
        close(inotify)
        let packs = state.withLock { state -> [IncomingPack] in
            defer { state.quarantines.removeAll() }
            return state.quarantines.values.compactMap(\.pack)
        }
        for pack in packs { pack.close() }
    }

    /// Watches the object folder `objects` (a repository's own, `<common dir>/objects`) for pushes.
    func watch(objects: String) {
        guard let folder = Folder(objects) else { return }
        state.withLock { state in
            guard !state.repositories.contains(folder), state.repositories.count < Self.maxRepositories else { return }
            let mask = UInt32(IN_CREATE) | UInt32(IN_DELETE) | UInt32(IN_ONLYDIR) | UInt32(IN_DONT_FOLLOW)
            let descriptor = inotify_add_watch(inotify, objects, mask)
            guard descriptor >= 0 else { return }
            state.repositories.insert(folder)
            state.watched[descriptor] = .objects(objects, folder)
        }
    }

    /// The checks made ahead on the pack in the quarantine `quarantine`, no longer fed: the caller
    /// keeps them while it verifies the push (their results are found only while they are alive).
    func claim(quarantine: String) -> EarlyChecks? {
        guard let folder = Folder(quarantine) else { return nil }
        let waits = Self.claimsWait.load(ordering: .relaxed)
        if waits {
            // Tests: until the watch has read the whole pack (git wrote it before running the hook).
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline, state.withLock({ $0.quarantines[folder]?.pack?.complete != true }) { usleep(1000) }
        }
        let pack = state.withLock { state -> IncomingPack? in
            guard state.quarantines[folder] != nil else { return nil }
            state.quarantines[folder]?.claimed = true
            defer { state.quarantines[folder]?.pack = nil }
            return state.quarantines[folder]?.pack
        }
        return pack?.claim(waiting: waits)
    }

    /// Packs being read now (for tests).
    var packsBeingRead: Int { state.withLock { $0.quarantines.values.filter { $0.pack != nil }.count } }

    /// Whether the pack in `quarantine` was read to its end, git having finished it (for tests).
    func hasRead(quarantine: String) -> Bool {
        guard let folder = Folder(quarantine) else { return false }
        return state.withLock { $0.quarantines[folder]?.pack?.complete == true }
    }

    /// Tests: a claim waits for the pack to be read whole and every object in it checked, so that what
    /// the checks find does not hang on how busy the machine is.
    static let claimsWait = Atomic<Bool>(false)

    private func run() {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        var descriptor = pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)
        while !stopped.load(ordering: .acquiring) {
            let ready = poll(&descriptor, 1, 200)
            if ready > 0 {
                let count = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress!, $0.count) }
                if count > 0 { buffer.withUnsafeBytes { handle(events: UnsafeRawBufferPointer(rebasing: $0[0..<count])) } }
            }
            dropStale()
        }
    }

    private func handle(events: UnsafeRawBufferPointer) {
        var offset = 0
        let header = MemoryLayout<inotify_event>.size
        while offset + header <= events.count {
            let event = events.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
            let nameBytes = events[(offset + header)..<min(events.count, offset + header + Int(event.len))]
            let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
            offset += header + Int(event.len)
            handle(watch: event.wd, mask: event.mask, name: name)
        }
    }

    private func handle(watch: Int32, mask: UInt32, name: String) {
        guard let watched = state.withLock({ $0.watched[watch] }) else { return }
        if mask & UInt32(IN_IGNORED) != 0 {
            state.withLock { state in
                state.watched[watch] = nil
                if case .objects(_, let folder) = watched { state.repositories.remove(folder) }
            }
            return
        }
        switch watched {
        case .objects(let objects, _):
            guard mask & UInt32(IN_ISDIR) != 0, name.hasPrefix("tmp_objdir-incoming-") else { return }
            let path = objects + "/" + name
            if mask & UInt32(IN_DELETE) != 0 {
                // git removed the quarantine (the push ended): its pack, if still unclaimed, goes.
                // (A file held open inside keeps the kernel from saying so to the quarantine's watch.)
                end(quarantine: path)
                return
            }
            guard let folder = Folder(path) else { return }
            let added = state.withLock { state -> Bool in
                guard state.quarantines[folder] == nil, state.quarantines.count < Self.maxQuarantines else { return false }
                state.quarantines[folder] = Quarantine(path: path)
                return true
            }
            guard added, add(watch: path, UInt32(IN_CREATE) | UInt32(IN_ONLYDIR), as: .quarantine(folder), of: folder) != nil else { return }
            // The pack folder may have come before the watch did.
            if Folder(path + "/pack") != nil { watchPackFolder(of: path, folder) }
        case .quarantine(let folder):
            guard mask & UInt32(IN_ISDIR) != 0, name == "pack", let path = state.withLock({ $0.quarantines[folder]?.path }) else { return }
            watchPackFolder(of: path, folder)
        case .packFolder(let folder):
            // index-pack writes `tmp_pack_*`, then renames it `pack-*.pack`: a watch that came late
            // finds the pack whole under its last name.
            let whole = name.hasPrefix("pack-") && name.hasSuffix(".pack")
            guard name.hasPrefix("tmp_pack_") || whole else { return }
            let pack = state.withLock { state -> IncomingPack? in
                guard let quarantine = state.quarantines[folder], !quarantine.claimed else { return nil }
                let path = quarantine.path + "/pack/" + name
                if let pack = quarantine.pack { return pack.path == path ? pack : nil }
                guard state.quarantines.values.filter({ $0.pack != nil }).count < Self.maxPacks, let pack = IncomingPack(path: path) else { return nil }
                state.quarantines[folder]?.pack = pack
                return pack
            }
            pack?.readMore(upTo: Self.maxPackBytes, ended: whole || mask & (UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_FROM)) != 0)
        }
    }

    private func watchPackFolder(of quarantine: String, _ folder: Folder) {
        let packs = quarantine + "/pack"
        let mask = UInt32(IN_CREATE) | UInt32(IN_MODIFY) | UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_FROM) | UInt32(IN_MOVED_TO) | UInt32(IN_ONLYDIR)
        guard let descriptor = add(watch: packs, mask, as: .packFolder(folder), of: folder) else { return }
        // index-pack may have begun before the watch did.
        for name in (try? FileManager.default.contentsOfDirectory(atPath: packs)) ?? [] {
            handle(watch: descriptor, mask: UInt32(IN_MODIFY), name: name)
        }
    }

    private func add(watch path: String, _ mask: UInt32, as watched: Watched, of quarantine: Folder) -> Int32? {
        let descriptor = inotify_add_watch(inotify, path, mask | UInt32(IN_DONT_FOLLOW))
        guard descriptor >= 0 else { return nil }
        state.withLock { state in
            state.watched[descriptor] = watched
            state.quarantines[quarantine]?.watches.append(descriptor)
        }
        return descriptor
    }

    /// Forgets the quarantine at `path` (the watch's own path for it): its watches end, and its pack
    /// if it was never claimed.
    private func end(quarantine path: String) {
        let ended = state.withLock { state -> Quarantine? in
            guard let folder = state.quarantines.first(where: { $0.value.path == path })?.key else { return nil }
            return state.quarantines.removeValue(forKey: folder)
        }
        guard let ended else { return }
        for descriptor in ended.watches { inotify_rm_watch(inotify, descriptor) }
        ended.pack?.close()
    }

    /// Lets go of packs nobody claimed in time, and of quarantines gone without a word.
    private func dropStale() {
        let now = Date()
        let stale = state.withLock { state -> (packs: [IncomingPack], gone: [String]) in
            var packs: [IncomingPack] = []
            for (folder, quarantine) in state.quarantines {
                if let pack = quarantine.pack, now.timeIntervalSince(pack.started) > Self.unclaimedSeconds {
                    packs.append(pack)
                    state.quarantines[folder]?.pack = nil
                }
            }
            return (packs, state.quarantines.values.map(\.path))
        }
        for pack in stale.packs { pack.close() }
        for path in stale.gone where Folder(path) == nil { end(quarantine: path) }
    }
}

/// One pack being written by git's index-pack, read as it grows into a `PackTee`, whose objects an
/// `EarlyChecks` checks on a thread of its own.
private final class IncomingPack: @unchecked Sendable {
    let path: String
    let started = Date()
    /// Bytes read at a time: the most a claim waits for the reader to let go of the pack.
    static let chunkBytes = 256 << 10
    private let file: Int32
    private let tee: PackTee
    /// Held while bytes are copied in, a chunk at a time, and while the checks are handed over.
    private let lock = NSLock()
    private let claimed = Atomic<Bool>(false)
    private var early: EarlyChecks?
    private var read = 0
    /// Where each chunk is read (under `lock`).
    private var chunk = [UInt8](repeating: 0, count: chunkBytes)
    /// Whether git has finished writing (the file closed or renamed), once everything was read.
    private let finished = Atomic<Bool>(false)
    var complete: Bool { finished.load(ordering: .acquiring) }

    /// The pack at `path`, if it is a regular file (never a link, a device or a pipe someone put there).
    init?(path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG, let tee = PackTee() else {
            Glibc.close(fd)
            return nil
        }
        self.path = path
        file = fd
        self.tee = tee
        early = EarlyChecks(reading: tee, idle: true)
    }

    deinit {
        Glibc.close(file)
    }

    /// Copies in what git has written since, up to `limit` bytes in all; `ended`, git has written it
    /// all, and what is read now is the whole pack.
    func readMore(upTo limit: Int, ended: Bool) {
        while true {
            lock.lock()
            defer { lock.unlock() }
            guard early != nil, !claimed.load(ordering: .acquiring) else { return }
            let got = read < limit ? chunk.withUnsafeMutableBytes { pread(file, $0.baseAddress!, min($0.count, limit - read), off_t(read)) } : 0
            guard got > 0 else {
                if ended { finished.store(true, ordering: .releasing) }
                return
            }
            chunk.withUnsafeBytes { tee.append(Data($0[0..<got])) }
            read += got
        }
    }

    /// The checks, handed to the verifier; the reader stops at its next object (or, `waiting`, once it
    /// has read every object copied in: for tests).
    func claim(waiting: Bool = false) -> EarlyChecks? {
        claimed.store(true, ordering: .releasing)
        lock.lock()
        let early = self.early
        self.early = nil
        lock.unlock()
        early?.finish(readingAll: waiting)
        return early
    }

    /// Unclaimed: the checks stop and their results go.
    func close() {
        _ = claim()
    }
}
#endif
