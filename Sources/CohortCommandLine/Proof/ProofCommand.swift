import ArgumentParser

struct ProofCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "proof",
        abstract: "Make or check signed identity proofs (JSON), for scripts and other languages.",
        subcommands: [ProofCreate.self, ProofVerify.self]
    )
}
