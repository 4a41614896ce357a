import CGit2
import CGit2Shim
import CohortBase
import Foundation

/// A username and password for an HTTP remote (Cohort servers take a token as the password).
public struct RemoteCredential: Sendable {
    public let username: String
    public let password: String

    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }
}

/// How far a transfer, or the work around it, is: the phase, and `current` of `total` (0 when the
/// phase has no count yet) with the bytes moved so far.
public struct TransferProgress: Sendable, Equatable {
    public enum Phase: String, Sendable {
        case receiving = "Receiving objects"
        case resolving = "Resolving deltas"
        case sending = "Sending objects"
        case verifying = "Verifying commits"
        case checkingOut = "Checking out files"
    }

    public let phase: Phase
    public let current: Int
    public let total: Int
    public let bytes: Int

    public init(_ phase: Phase, current: Int = 0, total: Int = 0, bytes: Int = 0) {
        self.phase = phase
        self.current = current
        self.total = total
        self.bytes = bytes
    }

    /// libgit2's fetch statistics: receiving until every object arrived, then resolving deltas.
    init(_ stats: git_indexer_progress) {
        if stats.received_objects < stats.total_objects || stats.total_deltas == 0 {
            self.init(.receiving, current: Int(stats.received_objects), total: Int(stats.total_objects), bytes: Int(stats.received_bytes))
        } else {
            self.init(.resolving, current: Int(stats.indexed_deltas), total: Int(stats.total_deltas), bytes: Int(stats.received_bytes))
        }
    }
}

/// What libgit2 may call back during a transfer. The credential provider runs on the transfer's own
/// thread and may block (it usually asks a server for a token).
public struct RemoteCallbacks: Sendable {
    /// Asked for a credential for `url`; `attempt` counts from 1. Throwing aborts the transfer with
    /// that error.
    public var credential: (@Sendable (_ url: String, _ attempt: Int) throws -> RemoteCredential)?
    public var progress: (@Sendable (TransferProgress) -> Void)?
    /// The server refused the credentials this many times: stop asking.
    public var maxCredentialAttempts = 3

    public init(credential: (@Sendable (_ url: String, _ attempt: Int) throws -> RemoteCredential)? = nil,
                progress: (@Sendable (TransferProgress) -> Void)? = nil) {
        self.credential = credential
        self.progress = progress
    }
}

/// The state one transfer's C callbacks share, reached through libgit2's payload pointer.
final class TransferPayload {
    let callbacks: RemoteCallbacks
    var attempts = 0
    /// The error a callback threw, reported instead of libgit2's "callback failed".
    var error: (any Error)?
    /// Refs the server refused in a push, with its reason.
    var refused: [(ref: String, reason: String)] = []
    /// What the server said on the side band (its hooks' output), bounded.
    var remoteText = Data()

    init(_ callbacks: RemoteCallbacks) {
        self.callbacks = callbacks
    }

    func install(into callbacks: inout git_remote_callbacks) {
        callbacks.payload = Unmanaged.passUnretained(self).toOpaque()
        callbacks.credentials = { out, url, _, allowed, payload in
            guard let out, let payload else { return GIT_PASSTHROUGH.rawValue }
            let state = Unmanaged<TransferPayload>.fromOpaque(payload).takeUnretainedValue()
            guard let provide = state.callbacks.credential,
                  allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT.rawValue != 0
            else { return GIT_PASSTHROUGH.rawValue }
            state.attempts += 1
            guard state.attempts <= state.callbacks.maxCredentialAttempts else {
                state.error = CohortError(.unauthorized, "the server refused the credentials \(state.callbacks.maxCredentialAttempts) times",
                                          hint: "check that you are a participant: `cohort id show`, and ask the owner")
                return GIT_EUSER.rawValue
            }
            do {
                let credential = try provide(url.map { String(cString: $0) } ?? "", state.attempts)
                return git_credential_userpass_plaintext_new(out, credential.username, credential.password)
            } catch {
                state.error = error
                return GIT_EUSER.rawValue
            }
        }
        callbacks.transfer_progress = { stats, payload in
            guard let stats, let payload else { return 0 }
            let state = Unmanaged<TransferPayload>.fromOpaque(payload).takeUnretainedValue()
            state.callbacks.progress?(TransferProgress(stats.pointee))
            return 0
        }
        callbacks.push_transfer_progress = { current, total, bytes, payload in
            guard let payload else { return 0 }
            let state = Unmanaged<TransferPayload>.fromOpaque(payload).takeUnretainedValue()
            state.callbacks.progress?(TransferProgress(.sending, current: Int(current), total: Int(total), bytes: Int(bytes)))
            return 0
        }
        callbacks.sideband_progress = { text, length, payload in
            guard let text, let payload, length > 0 else { return 0 }
            let state = Unmanaged<TransferPayload>.fromOpaque(payload).takeUnretainedValue()
            if state.remoteText.count < 64 << 10 {
                state.remoteText.append(Data(bytes: text, count: Int(length)))
            }
            return 0
        }
        callbacks.push_update_reference = { ref, status, payload in
            guard let payload, let status else { return 0 }
            let state = Unmanaged<TransferPayload>.fromOpaque(payload).takeUnretainedValue()
            state.refused.append((ref.map { String(cString: $0) } ?? "", String(cString: status)))
            return 0
        }
    }

    /// The error to report for a failed libgit2 call: the callback's own, else libgit2's.
    func failure(_ result: Int32, _ action: String) -> any Error {
        error ?? gitFailure(result, action)
    }
}

/// One ref a push could not update, with the server's reason.
public struct PushRefusal: Sendable, Equatable {
    public let ref: String
    public let reason: String

    public init(ref: String, reason: String) {
        self.ref = ref
        self.reason = reason
    }
}

/// What a push did: the refused refs (none: everything was accepted) and the server's messages.
public struct PushResult: Sendable {
    public let refused: [PushRefusal]
    /// The server's side-band lines (its hooks' output), progress lines left out.
    public let remoteMessages: [String]

    public init(refused: [PushRefusal], remoteMessages: [String]) {
        self.refused = refused
        self.remoteMessages = remoteMessages
    }

    public var accepted: Bool { refused.isEmpty }

    /// Whether every refusal is of the kind a push gets when someone else pushed first (the ref
    /// moved, or was locked by their push): fetch, merge and push again, rather than give up.
    public var lostRace: Bool {
        !refused.isEmpty && refused.allSatisfy { refusal in
            let reason = refusal.reason.lowercased()
            return ["non-fast-forward", "fetch first", "failed to update ref", "failed to lock", "cannot lock ref",
                    "stale info", "the remote moved", "incorrect old value"].contains { reason.contains($0) }
        }
    }
}

extension Repository {
    /// Clones `url` into `directory` (which must not exist or be empty), checking out the remote's
    /// default branch. With `tee`, the pack the clone fetches is copied there as it arrives and indexed
    /// by Cohort's own indexer (libgit2's where that declines it), which hands its commits and notices on.
    public static func clone(from url: String, into directory: URL, checkout: Bool = true,
                             callbacks: RemoteCallbacks = RemoteCallbacks(), tee: PackTee? = nil) throws -> Repository {
        try GitRuntime.startNetwork()
        var options = git_clone_options()
        try check(git_clone_options_init(&options, UInt32(GIT_CLONE_OPTIONS_VERSION)), "clone options")
        if !checkout { options.checkout_opts.checkout_strategy = GIT_CHECKOUT_NONE.rawValue }
        let payload = TransferPayload(callbacks)
        payload.install(into: &options.fetch_opts.callbacks)
        if let tee {
            // The repository libgit2 would make (git_repository_init), with the copy attached before
            // the fetch; a copy that cannot be attached only leaves the clone as fast as before.
            options.repository_cb = { out, path, bare, payload in
                let result = git_repository_init(out, path, UInt32(bare))
                if result == 0, let repository = out?.pointee, let payload {
                    _ = cohort_git_tee_fetched_pack(repository, OpaquePointer(payload))
                }
                return result
            }
            options.repository_cb_payload = UnsafeMutableRawPointer(tee.pointer)
        }
        var repository: OpaquePointer?
        let result = withExtendedLifetime((payload, tee)) { git_clone(&repository, url, directory.path, &options) }
        guard result >= 0, let repository else { throw payload.failure(result, "cannot clone \(url)") }
        return Repository(repository, origin: .path(directory))
    }

    /// The URL of remote `name`, or nil when there is no such remote.
    public func remoteURL(_ name: String) throws -> String? {
        var remote: OpaquePointer?
        let result = git_remote_lookup(&remote, pointer, name)
        if result == GIT_ENOTFOUND.rawValue || result == GIT_EINVALIDSPEC.rawValue { return nil }
        try check(result, "cannot read remote \(name)")
        defer { git_remote_free(remote) }
        return git_remote_url(remote).map { String(cString: $0) }
    }

    /// Creates remote `name` with `url` and the usual fetch refspec, or points an existing one at `url`.
    public func setRemote(_ name: String, url: String) throws {
        if try remoteURL(name) != nil {
            try check(git_remote_set_url(pointer, name, url), "cannot set the URL of remote \(name)")
            return
        }
        var remote: OpaquePointer?
        try check(git_remote_create(&remote, pointer, name, url), "cannot create remote \(name)")
        git_remote_free(remote)
    }

    /// A remote whose URL is a relative folder reaches it from the top of the workspace (libgit2 would
    /// take it from the process's current folder).
    private func resolveRelativeURL(of remote: OpaquePointer?) throws {
        guard let url = git_remote_url(remote).map({ String(cString: $0) }) else { return }
        let absolute = absoluteRemoteURL(url)
        guard absolute != url else { return }
        let result = git_remote_set_instance_url(remote, absolute)
        guard result >= 0 else {
            throw CohortError(.git, "cannot resolve the remote's folder \(url): \(gitMessage(result))",
                              hint: "name it by an absolute path: git remote set-url NAME /path/to/repo.git")
        }
    }

    /// Fetches remote `name` with its configured refspecs (remote-tracking branches move).
    public func fetch(remote name: String, callbacks: RemoteCallbacks = RemoteCallbacks()) throws {
        try GitRuntime.startNetwork()
        var remote: OpaquePointer?
        try check(git_remote_lookup(&remote, pointer, name), "there is no remote \(name)")
        defer { git_remote_free(remote) }
        try resolveRelativeURL(of: remote)
        var options = git_fetch_options()
        try check(git_fetch_options_init(&options, UInt32(GIT_FETCH_OPTIONS_VERSION)), "fetch options")
        let payload = TransferPayload(callbacks)
        payload.install(into: &options.callbacks)
        let result = withExtendedLifetime(payload) { git_remote_fetch(remote, nil, &options, nil) }
        guard result >= 0 else { throw payload.failure(result, "cannot fetch from \(name)") }
    }

    /// Pushes `refspecs` to remote `name`. Returns the refs the server refused (libgit2 reports a
    /// refused ref as success; the per-ref status is where the refusal is).
    public func push(remote name: String, refspecs: [String], callbacks: RemoteCallbacks = RemoteCallbacks()) throws -> PushResult {
        try GitRuntime.startNetwork()
        var remote: OpaquePointer?
        try check(git_remote_lookup(&remote, pointer, name), "there is no remote \(name)")
        defer { git_remote_free(remote) }
        try resolveRelativeURL(of: remote)
        var options = git_push_options()
        try check(git_push_options_init(&options, UInt32(GIT_PUSH_OPTIONS_VERSION)), "push options")
        let payload = TransferPayload(callbacks)
        payload.install(into: &options.callbacks)
        let strings = refspecs.map { strdup($0) }
        defer { strings.forEach { free($0) } }
        let result = strings.withUnsafeBufferPointer { buffer -> Int32 in
            var array = git_strarray(strings: UnsafeMutablePointer(mutating: buffer.baseAddress), count: buffer.count)
            return withExtendedLifetime(payload) { git_remote_push(remote, &array, &options) }
        }
        if result == GIT_ENONFASTFORWARD.rawValue, payload.error == nil {
            // libgit2 refuses before sending when the remote's tip is a commit it has not fetched:
            // someone pushed first.
            return PushResult(refused: refspecs.map { PushRefusal(ref: String($0.split(separator: ":").last ?? ""), reason: "the remote moved (fetch first)") },
                              remoteMessages: [])
        }
        guard result >= 0 else { throw payload.failure(result, "cannot push to \(name)") }
        let lines = String(decoding: payload.remoteText, as: UTF8.self)
            .split(whereSeparator: { $0 == "\n" || $0 == "\r" }).map(String.init)
            .filter { !$0.isEmpty && !$0.hasPrefix("Resolving deltas") }
        return PushResult(refused: payload.refused.map { PushRefusal(ref: $0.ref, reason: $0.reason) }, remoteMessages: lines)
    }
}
