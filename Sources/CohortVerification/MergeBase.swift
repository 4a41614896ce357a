import CohortBase
import CohortGit

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

    init(commit: Commit, states: [CollaborationState]) throws {
        var members = 0
        var settings = 0
        for (index, candidate) in states.enumerated() {
            // The newest membership; among parents that share it, the one with the newest collaboration
            // file, so that its line (trusted as the merge's own) saw the merge's settings.
            let best = states[members]
            if (candidate.membership.version, candidate.collaboration.revisionNumber) > (best.membership.version, best.collaboration.revisionNumber) {
                members = index
            }
            if candidate.collaboration.revisionNumber > states[settings].collaboration.revisionNumber { settings = index }
        }
        let newest = states[members]
        // Older versions on the other side need no check of where they came from: the merge keeps the
        // newest file, and every commit that arrives only through another parent must be signed by a
        // writer of the merge's membership (`HistoryVerifier.checkSideCommits`), so an old or forked
        // version brings no one back. Two different files of the same version are a fork.
        for (index, other) in states.enumerated()
        where other.membership.version == newest.membership.version && other.membersBlob != newest.membersBlob {
            throw CohortError(.notPermitted, "the merge joins two different membership files at version \(newest.membership.version) (\(commit.parents[members].hex) and \(commit.parents[index].hex))",
                              hint: "the owner changed the membership in two places: keep one line and make the other change again on it")
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
