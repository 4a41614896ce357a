// swift-tools-version:6.1
// A sink of your own, from outside Cohort: a `digest` sink type and a `cohort-digest` command that is
// `cohort` with it registered beside the shipped sinks. See Docs/Plugins.md.
import PackageDescription

let package = Package(
    name: "DigestSink",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "cohort-digest", targets: ["cohort-digest"]),
    ],
    dependencies: [
        // In your own package: .package(name: "Cohort", url: "https://…/cohort.git", from: "…"),
        // or a path to your copy of Cohort, as here.
        .package(name: "Cohort", path: "../.."),
    ],
    targets: [
        .target(
            name: "DigestSink",
            dependencies: [.product(name: "CohortNotices", package: "Cohort")]
        ),
        .executableTarget(
            name: "cohort-digest",
            dependencies: ["DigestSink", .product(name: "CohortCommandLine", package: "Cohort")]
        ),
    ]
)
