import CGit2
import CohortBase
@testable import CohortGit
import CohortTestSupport
import Foundation
import Testing

/// Cohort reads a commit's tree, parents and message from the one copy of its bytes it also checks
/// the signature on; for every object, odd ones included, that reading must be libgit2's (which the
/// history walk and every other reader use), or both must refuse.
@Suite struct CommitParseTests {
    let tree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  // the empty tree
    let parent = "1111111111111111111111111111111111111111"
    let other = "2222222222222222222222222222222222222222"
    let author = "author Ann <ann@example.com> 1700000000 +0000\n"
    let committer = "committer Ann <ann@example.com> 1700000000 +0100\n"

    func libgit2(_ repository: Repository, _ id: ObjectID) -> (tree: ObjectID, parents: [ObjectID], message: String)? {
        try? repository.withCommit(id) { commit in
            (ObjectID(git_commit_tree_id(commit)),
             (0..<git_commit_parentcount(commit)).map { ObjectID(git_commit_parent_id(commit, $0)) },
             git_commit_message_raw(commit).map { String(cString: $0) } ?? "")
        }
    }

    @Test func readsEveryCommitAsLibgit2Does() throws {
        let temp = try TemporaryDirectory()
        #expect(try run("git", ["init", "-q", temp.url.path], in: temp.url).status == 0)
        let repository = try Repository(at: temp.url)
        let accepted: [String] = [
            "tree \(tree)\n\(author)\(committer)\nA message\n\nCohort-Notice: x\n",
            "tree \(tree)\nparent \(parent)\nparent \(other)\n\(author)\(committer)encoding ISO-8859-1\n\nmerge\n",
            "tree \(tree.uppercased())\nparent \(parent.uppercased())\n\(author)\(committer)\nupper-case ids\n",
            "tree \(tree)\n\(author)\(committer)\nbefore a NUL\u{0}after it\n",
            "tree \(tree)\n\(author)\(committer)",
            "tree \(tree)\n\(author)\(committer)\n",
            "tree \(tree)\n\(author)\(author)\(committer)\ntwo authors\n",
            "tree \(tree)\n\(author)\(committer)gpgsig -----BEGIN SSH SIGNATURE-----\n \n abc\n -----END SSH SIGNATURE-----\n\nsigned\n",
            "tree \(tree)\n\(author)\(committer)mergetag object \(parent)\n type commit\n\n\nafter an odd header\n",
        ]
        let refused: [String] = [
            "parent \(parent)\ntree \(tree)\n\(author)\(committer)\nparent first\n",
            "tree \(tree)\n\(committer)\nno author\n",
            "tree \(tree)\n\(author)\nno committer\n",
            "tree \(tree.dropLast())\n\(author)\(committer)\nshort id\n",
            "tree \(tree)\n\(author)\(String(committer.dropLast()))",
            "tree  \(tree)\n\(author)\(committer)\ntwo spaces\n",
            "tree \(tree)\n\(author)author B <b> 1 +0000",
            "tree \(tree)\nauthor x\n\(committer)\nan author without an address\n",
            "tree \(tree)\n\(author)committer \n\nan empty committer\n",
            "tree \(tree)\nauthor Ann <ann@example.com> yesterday +0000\n\(committer)\na word for a time\n",
            "tree \(tree)\nauthor Ann >ann@example.com< 1 +0000\n\(committer)\nturned round\n",
            "tree \(tree)\nparent \(parent)x\n\(author)\(committer)\ngarbage after a parent\n",
            "tree \(tree)\r\n\(author)\(committer)\ncarriage return\n",
            "tree \(tree)\n\(author)",
        ]
        // Stricter than libgit2, which reads an address past the NUL: a NUL in a person's line.
        let refusedByCohortOnly = "tree \(tree)\nauthor Ann\u{0} <ann@example.com> 1 +0000\n\(committer)\na NUL in a name\n"
        for text in accepted + refused + [refusedByCohortOnly] {
            let id = try Attacks.writeObject(Data(text.utf8), type: "commit", inRepositoryAt: temp.url)
            let ours = try? repository.commit(id)
            let theirs = libgit2(repository, id)
            #expect((ours == nil) == (refused.contains(text) || text == refusedByCohortOnly), "\(text.debugDescription)")
            #expect((theirs == nil) == refused.contains(text), "\(text.debugDescription)")
            if let ours, let theirs {
                #expect(ours.tree == theirs.tree && ours.parents == theirs.parents && ours.message == theirs.message, "\(text.debugDescription)")
            }
        }
    }

    /// The signature is the one `gpgsig` header, continuation lines joined, over every other byte of
    /// the commit, as stock git splits it: wherever the header sits, with or without a line feed at
    /// the very end, never from the message, and refused when there are two or a look-alike.
    @Test func splitsTheSignatureAsGitDoes() throws {
        let head = "tree \(tree)\n\(author)\(committer)"
        let armored = "-----BEGIN SSH SIGNATURE-----\n\nabc\n-----END SSH SIGNATURE-----\n"
        let header = "gpgsig -----BEGIN SSH SIGNATURE-----\n \n abc\n -----END SSH SIGNATURE-----\n"
        let signed: [(commit: String, payload: String, armored: String)] = [
            (head + header + "\nsigned\n", head + "\nsigned\n", armored),
            ("tree \(tree)\n" + header + author + committer + "\nfirst\n", head + "\nfirst\n", armored),
            (head + header + "encoding UTF-8\n\nbefore another header\n", head + "encoding UTF-8\n\nbefore another header\n", armored),
            (head + "gpgsig one line", head, "one line"),
            (head + "gpgsig x\n\nmessage\ngpgsig in the message\n", head + "\nmessage\ngpgsig in the message\n", "x\n"),
        ]
        for (commit, payload, expected) in signed {
            let split = try #require(try CommitSignature.split(Data(commit.utf8)), "\(commit.debugDescription)")
            #expect(split.armored == expected && split.signedData == Data(payload.utf8), "\(commit.debugDescription)")
        }
        for unsigned in [head + "\nno signature\n", head + "\nmessage\ngpgsig in the message only\n", head + "\n\ngpgsig", ""] {
            #expect(try CommitSignature.split(Data(unsigned.utf8)) == nil, "\(unsigned.debugDescription)")
        }
        for refused in [head + header + header + "\ntwice\n", head + "gpgsig-sha256 x\n\nanother kind\n", head + "gpgsigx\n\nglued\n", head + "gpgsig"] {
            let error = #expect(throws: CohortError.self, "\(refused.debugDescription)") { try CommitSignature.split(Data(refused.utf8)) }
            #expect(error?.code == .badSignature)
        }
    }

    /// An author git cannot write is refused as the author's fault, with what to change, not as a
    /// malformed history (libgit2 words both "failed to parse").
    @Test func anAuthorGitCannotWriteIsNamed() throws {
        let temp = try TemporaryDirectory()
        #expect(try run("git", ["init", "-q", temp.url.path], in: temp.url).status == 0)
        let repository = try Repository(at: temp.url)
        let refused = #expect(throws: CohortError.self) {
            try repository.createCommit(tree: ObjectID(hex: tree), parents: [], message: "m\n",
                                        author: Person(name: "Ann <x>", email: "ann@example.com"), sign: { _ in "" })
        }
        #expect(refused?.code == .malformed)
        #expect(refused?.reason.contains("as a commit's author") == true && refused?.hint?.contains("'<'") == true, "\(String(describing: refused))")
    }
}
