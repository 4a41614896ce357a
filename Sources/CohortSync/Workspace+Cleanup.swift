import CohortBase
import CohortGit
import CohortWorkspace
import Foundation

extension Workspace {
    /// After a sync that died: the temporary files its atomic writes left (`.NAME.cohort-N.tmp`, in
    /// the folder and under `.git/cohort/`) and git's temporary objects go. Only Cohort's own
    /// temporary names are touched; nothing the person wrote.
    func cleanUpAfterCrash() {
        GitLocks.removeTemporaryObjects(in: repository.gitDirectory)
        for root in [directory, repository.cohortDirectory.url] {
            guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { continue }
            for case let url as URL in walker {
                let name = url.lastPathComponent
                if name == ".git", root == directory {
                    walker.skipDescendants()
                } else if Self.isTemporaryName(name) {
                    unlink(url.path)
                }
            }
        }
    }

    /// `.NAME.cohort-DIGITS.tmp`, as `AtomicFile.write` names its temporary files.
    static func isTemporaryName(_ name: String) -> Bool {
        guard name.hasPrefix("."), name.hasSuffix(".tmp"), let marker = name.range(of: ".cohort-", options: .backwards) else { return false }
        let digits = name[marker.upperBound..<name.index(name.endIndex, offsetBy: -4)]
        return !digits.isEmpty && digits.allSatisfy(\.isNumber)
    }
}
