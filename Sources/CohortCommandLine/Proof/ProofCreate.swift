import ArgumentParser
import CohortBase
import CohortIdentity
import Foundation

struct ProofCreate: CohortCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Sign a message with this device's key for a collaboration, with its proof of inclusion.",
        discussion: """
        Prints {"scheme", "publicKey", "publicKeyIndex", "inclusionHashes", "signature", "message"}: \
        binary values base64, the signature ECDSA P-256 / SHA-256 in DER by this device's diversified key over \
        "COHORT-V1-IDENTITY-PROOF\\n" then the message. A message that begins "DSSEv1 " or "SSHSIG" (what \
        signed files and commits sign) is refused: signing it could forge your signature on those.
        """
    )

    @Option(help: ArgumentHelp("The collaboration identifier.", valueName: "ID"))
    var collaboration: String

    @Option(help: ArgumentHelp("The collaboration's salt, 32 hex digits.", valueName: "HEX"))
    var salt: String

    @Option(help: ArgumentHelp("The message to sign, base64 (a server challenge, or any non-empty bytes).", valueName: "BASE64"))
    var message: String

    @OptionGroup var output: OutputOptions

    @OptionGroup var home: HomeOptions

    func execute() throws {
        let context = try CollaborationContext(identifier: collaboration, saltHex: salt)
        let bytes = try Base64Field.decode(message, field: "--message", maxBytes: SignedIdentityProof.maxMessageBytes)
        let proof = try home.home.proof(signing: bytes, in: context)
        try output.emit(proof.jsonData())
    }
}
