// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Cohort",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "cohort", targets: ["cohort"]),
        .executable(name: "cohort-hook", targets: ["cohort-hook"]),
        .executable(name: "cohort-hook-client", targets: ["cohort-hook-client"]),
        .executable(name: "cohort-bench", targets: ["cohort-bench"]),
        .executable(name: "cohort-fuzz", targets: ["cohort-fuzz"]),
        .executable(name: "git-credential-cohort", targets: ["git-credential-cohort"]),
        // What a program of your own needs for a sink of your own (Docs/Plugins.md): the sink protocol
        // and its configuration; the command line, to build your `cohort` with it; a sink for tests.
        .library(name: "CohortNotices", targets: ["CohortNotices"]),
        .library(name: "CohortCommandLine", targets: ["CohortCommandLine"]),
        .library(name: "CohortNoticesTesting", targets: ["CohortNoticesTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        // C libraries from the system, and the shim for what Swift cannot call.
        .systemLibrary(
            name: "CGit2",
            path: "Sources/CGit2",
            pkgConfig: "libgit2",
            providers: [.apt(["libgit2-dev"])]
        ),
        .target(
            name: "CGit2Shim",
            dependencies: ["CGit2", "CLibcrypto", "CZlib"],
            path: "Sources/CGit2Shim"
        ),
        .systemLibrary(
            name: "CZlib",
            path: "Sources/CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .systemLibrary(
            name: "CLibcrypto",
            path: "Sources/CLibcrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // ECDSA P-256 verification against a key's table of multiples, for keys that sign many times.
        // On x86-64 Linux it calls the field and point assembly of the BoringSSL inside swift-crypto
        // (swift-crypto links BoringSSL on Linux, not on Apple's systems).
        .target(name: "CP256", dependencies: [.product(name: "Crypto", package: "swift-crypto")], path: "Sources/CP256",
                cSettings: [.define("COHORT_P256_BORINGSSL", .when(platforms: [.linux]))]),

        // The base under everything: the error type and its codes, atomic files and locks, hex and
        // base64, the version, the paths under `.git/cohort/`. Foundation only.
        .target(name: "CohortBase"),
        // Identity: keys, cards, diversification, trees, proofs, challenges. No git.
        .target(
            name: "CohortIdentity",
            dependencies: [
                "CohortBase",
                .product(name: "Crypto", package: "swift-crypto"),
                "CLibcrypto", "CP256",
            ]
        ),
        // Collaboration model: share options, participants, membership, notices, signed envelopes.
        .target(
            name: "CohortCollaboration",
            dependencies: [
                "CohortBase", "CohortIdentity",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The JSON bodies of a Cohort server's identity API, shared by `cohort serve` and its clients.
        .target(
            name: "CohortServerAPI",
            dependencies: ["CohortBase", "CohortIdentity", "CohortCollaboration"]
        ),
        // The thin Swift layer over libgit2.
        .target(
            name: "CohortGit",
            dependencies: ["CohortBase", "CGit2", "CGit2Shim"]
        ),

        // The one verification core: the hook, the server and every client use it.
        .target(
            name: "CohortVerification",
            dependencies: ["CohortBase", "CohortIdentity", "CohortCollaboration", "CohortGit",
                           .product(name: "Crypto", package: "swift-crypto")]
        ),

        // Workspaces: start, participants, commit, comment, verify, export.
        .target(
            name: "CohortWorkspace",
            dependencies: ["CohortBase", "CohortIdentity", "CohortCollaboration", "CohortGit", "CohortVerification", "CohortNotices"]
        ),

        // Notice sinks: the protocol, sink types and their configuration, the durable outbox.
        .target(
            name: "CohortNotices",
            dependencies: [
                "CohortBase", "CohortCollaboration",
                .product(name: "TOMLKit", package: "TOMLKit"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The sinks that ship, each its own target under Plugins/.
        .target(
            name: "StdoutSink",
            dependencies: ["CohortBase", "CohortCollaboration", "CohortNotices"],
            path: "Plugins/StdoutSink"
        ),
        .target(
            name: "FileSink",
            dependencies: ["CohortCollaboration", "CohortNotices"],
            path: "Plugins/FileSink"
        ),
        .target(
            name: "ExecSink",
            dependencies: ["CohortCollaboration", "CohortNotices"],
            path: "Plugins/ExecSink"
        ),
        .target(
            name: "WebhookSink",
            dependencies: [
                "CohortBase", "CohortCollaboration", "CohortNotices",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Plugins/WebhookSink"
        ),
        // The sink types that ship, as one list of factories.
        .target(
            name: "CohortSinks",
            dependencies: ["CohortNotices", "StdoutSink", "FileSink", "ExecSink", "WebhookSink"]
        ),
        // A sink that keeps what it is given, for the tests of your own code.
        .target(
            name: "CohortNoticesTesting",
            dependencies: ["CohortNotices"]
        ),
        // The hooks for any git server: their installer, and the pre-receive verifier. No notices.
        .target(
            name: "CohortHooks",
            dependencies: ["CohortBase", "CohortGit", "CohortVerification"]
        ),
        // The post-receive hook: the notices of an accepted push, into the outbox and out to the sinks.
        .target(
            name: "CohortPostReceive",
            dependencies: ["CohortBase", "CohortCollaboration", "CohortGit", "CohortVerification", "CohortHooks", "CohortNotices"]
        ),

        // The client side of a Cohort server: links, challenges, tokens, the server's answers.
        .target(
            name: "CohortRemote",
            dependencies: [
                "CohortBase", "CohortIdentity", "CohortCollaboration", "CohortServerAPI", "CohortGit",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // `cohort clone`, `publish`, `sync`, `status` and `watch`: local-first sync through any git remote.
        .target(
            name: "CohortSync",
            dependencies: ["CohortBase", "CohortIdentity", "CohortCollaboration", "CohortServerAPI", "CohortGit", "CohortVerification", "CohortWorkspace", "CohortRemote"]
        ),
        // `cohort serve`: git's smart HTTP behind proofs of identity.
        .target(
            name: "CohortServer",
            dependencies: [
                "CohortBase", "CohortIdentity", "CohortCollaboration", "CohortGit", "CohortVerification", "CohortServerAPI", "CohortHooks",
                "CohortNotices", "CohortPostReceive",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                "CZlib",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),

        // The command line as a library: `CohortCommandLine.main(sinks:)` is `cohort`, with the sink
        // types it is given.
        .target(
            name: "CohortCommandLine",
            dependencies: [
                "CohortBase", "CohortIdentity", "CohortGit", "CohortCollaboration", "CohortVerification", "CohortWorkspace", "CohortHooks",
                "CohortNotices", "CohortSinks", "CohortPostReceive", "CohortRemote", "CohortServer", "CohortSync",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "cohort",
            dependencies: ["CohortCommandLine"]
        ),
        .executableTarget(
            name: "cohort-hook",
            dependencies: ["CohortBase", "CohortHooks"]
        ),
        // What the installed pre-receive runs with a resident verifier (`cohort hook serve`): the push
        // handed over a Unix socket, or to cohort-hook when none answers. C, to start in a millisecond.
        .executableTarget(
            name: "cohort-hook-client",
            path: "Sources/cohort-hook-client"
        ),
        // git's credential helper for Cohort servers (`git config credential.helper cohort`).
        .executableTarget(
            name: "git-credential-cohort",
            dependencies: ["CohortBase", "CohortIdentity", "CohortServerAPI", "CohortRemote"]
        ),
        // The fuzz targets of every parser of outside bytes (`make fuzz`); a regular build replays corpora.
        .target(
            name: "CFuzzDriver",
            path: "Sources/CFuzzDriver"
        ),
        .executableTarget(
            name: "cohort-fuzz",
            dependencies: [
                "CohortBase", "CohortIdentity", "CohortCollaboration", "CohortGit", "CohortVerification", "CohortServerAPI", "CohortServer", "CohortHooks", "CFuzzDriver",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .executableTarget(
            name: "cohort-bench",
            dependencies: [
                "CohortBase", "CohortIdentity", "CohortCollaboration", "CohortGit", "CohortVerification", "CohortWorkspace", "CohortRemote",
                "CohortNotices", "FileSink", "WebhookSink",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),

        .target(
            name: "CohortTestSupport",
            dependencies: ["CohortBase", "CohortIdentity", "CohortCollaboration", "CohortGit", "CohortVerification", "CohortWorkspace"],
            path: "Tests/Support"
        ),
        .testTarget(
            name: "CohortIdentityTests",
            dependencies: [
                "CohortBase", "CohortIdentity",
                "CohortTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                "CLibcrypto",
            ]
        ),
        .testTarget(
            name: "CohortWorkspaceTests",
            dependencies: [
                "CohortBase", "CohortIdentity", "CohortCollaboration", "CohortGit", "CGit2", "CohortVerification", "CohortWorkspace",
                "CohortSync", "CohortNotices", "CohortNoticesTesting", "CohortTestSupport",
            ]
        ),
        .testTarget(
            name: "CohortNoticesTests",
            dependencies: [
                "CohortBase", "CohortIdentity", "CohortCollaboration", "CohortNotices", "CohortNoticesTesting", "CohortSinks",
                "StdoutSink", "FileSink", "ExecSink", "WebhookSink", "CohortTestSupport",
            ]
        ),
        .testTarget(
            name: "CohortHookTests",
            dependencies: [
                "cohort", "cohort-hook", "cohort-hook-client", "CohortBase", "CohortIdentity", "CohortCollaboration", "CohortGit", "CohortVerification", "CohortWorkspace",
                "CohortHooks", "CohortNotices", "CohortSinks", "CohortTestSupport",
            ]
        ),
        .testTarget(
            name: "CohortCLITests",
            dependencies: [
                "cohort", "cohort-fuzz", "CohortBase", "CohortIdentity", "CohortGit", "CohortTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "CohortSyncTests",
            dependencies: ["cohort", "CohortIdentity", "CohortCollaboration", "CohortGit", "CohortWorkspace", "CohortHooks", "CohortTestSupport"]
        ),
        .testTarget(
            name: "CohortServerTests",
            dependencies: [
                "cohort", "git-credential-cohort", "CohortBase", "CohortIdentity", "CohortCollaboration", "CohortServerAPI", "CohortGit",
                "CohortVerification", "CohortWorkspace",
                "CohortRemote", "CohortServer", "CohortTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
