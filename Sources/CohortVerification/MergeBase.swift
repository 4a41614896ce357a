import CohortCollaboration
import CohortGit
import CohortIdentity

/// Where a commit's `.cohort/` state comes from: the newest membership among its parents (the highest
/// version; parents at that version must hold the very same file) and the newest collaboration file
/// (the highest revision, likewise). For one parent, that parent. A merge's files must be exactly
/// these or a valid next step from them; anything older, from whichever parent, is refused.
struct MergeBase {
    /// The parent whose membership is the newest: its line is the merge's own verified history.
    let membershipParent: Int
    /// The parent whose collaboration file is the newest.
    let collaborationParent: Int
    /// The state the commit is checked against.
    let state: CollaborationState

    init(commit: Commit, states: [CollaborationState], verifier: HistoryVerifier) throws {
        var members = 0
        var settings = 0
        for (index, candidate) in states.enumerated() {
            if candidate.membership.version > states[members].membership.version { members = index }
            if candidate.collaboration.revisionNumber > states[settings].collaboration.revisionNumber { settings = index }
        }
        let newest = states[members]
        for (index, other) in states.enumerated() where index != members {
            if other.membership.version == newest.membership.version, other.membersBlob != newest.membersBlob {
                throw CohortError(.notPermitted, "the merge joins two different membership files at version \(newest.membership.version) (\(commit.parents[members].hex) and \(commit.parents[index].hex))",
                                  hint: "the owner changed the membership in two places: keep one line and make the other change again on it")
            }
            guard try verifier.isOnMembershipLine(other, of: commit.parents[members], state: newest) else {
                throw CohortError(.notPermitted, "the merge joins membership version \(other.membership.version) of \(commit.parents[index].hex), which is not in the history of version \(newest.membership.version)",
                                  hint: "merge onto the branch with the newest membership")
            }
        }
        let newestSettings = states[settings]
        for (index, other) in states.enumerated()
        where other.collaboration.revisionNumber == newestSettings.collaboration.revisionNumber && other.collaborationBlob != newestSettings.collaborationBlob {
            throw CohortError(.notPermitted, "the merge joins two different collaboration files at revision \(newestSettings.collaboration.revisionNumber) (\(commit.parents[settings].hex) and \(commit.parents[index].hex))",
                              hint: "the owner changed the collaboration's settings in two places: keep one line and change them again on it")
        }
        membershipParent = members
        collaborationParent = settings
        state = settings == members ? newest : newest.withCollaboration(of: newestSettings)
    }
}
