import ArgumentParser
import CohortWorkspace
import Foundation

/// `--workspace DIR` (default: the current directory) and the identity home.
struct WorkspaceOptions: ParsableArguments {
    @Option(name: .customLong("workspace"), help: ArgumentHelp("The workspace (default: the one containing the current directory).", valueName: "DIR"))
    var path: String?

    @OptionGroup var home: HomeOptions

    func open() throws -> Workspace {
        let workspace = try Workspace(containing: URL(fileURLWithPath: path ?? FileManager.default.currentDirectoryPath), home: home.home)
        try workspace.checkIsCollaboration()
        return workspace
    }
}
