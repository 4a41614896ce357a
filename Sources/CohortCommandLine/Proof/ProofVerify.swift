import ArgumentParser
import CohortIdentity
import Foundation

struct ProofVerify: CohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify a signed identity proof (JSON on standard input) against a list of roots.",
        discussion: """
        Each line of the roots file is `SCHEME HEX` (cohort-v1 or apple-v1), or `SCHEME HEX revoked`; \
        blank lines and lines starting with # are skipped. Prints `ok ROOTHEX` and exits 0, or prints \
        `error: CODE: explanation` and exits 1. For apple-v1 the signature may be DER or raw r‖s.
        """
    )

    @Option(help: ArgumentHelp("The roots file.", valueName: "FILE"))
    var roots: String

    @Option(help: ArgumentHelp("Read the proof from FILE instead of standard input.", valueName: "FILE"))
    var proof: String = "-"

    func execute() throws {
        let known = try KnownRoots(rootsFile: Files.read(roots, maxBytes: KnownRoots.maxFileBytes, what: "roots file"))
        let signed = try SignedIdentityProof(json: Files.read(proof, maxBytes: SignedIdentityProof.maxJSONBytes, what: "proof"))
        let root = try signed.verify(against: known)
        Terminal.print("ok \(root.hex)")
    }
}
