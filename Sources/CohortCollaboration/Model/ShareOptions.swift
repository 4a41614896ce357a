import CohortBase
import Foundation

/// One choice in a group (`SWCollaborationOption`).
public struct CollaborationOption: Codable, Hashable, Sendable {
    public var identifier: String
    public var title: String
    public var isSelected: Bool

    public init(identifier: String, title: String, isSelected: Bool) {
        self.identifier = identifier
        self.title = title
        self.isSelected = isSelected
    }
}

/// A group of options: switches (`SWCollaborationOptionsGroup`, any selection) or a picker
/// (`SWCollaborationOptionsPickerGroup`, exactly one selected).
public struct OptionsGroup: Codable, Hashable, Sendable {
    public enum Kind: String, Codable, Sendable {
        case switches, picker
    }

    public var identifier: String
    public var title: String
    public var kind: Kind
    public var options: [CollaborationOption]

    public init(identifier: String, title: String, kind: Kind, options: [CollaborationOption]) {
        self.identifier = identifier
        self.title = title
        self.kind = kind
        self.options = options
    }
}

/// The collaboration's share options (`SWCollaborationShareOptions`): groups and a summary. Cohort
/// enforces them: the permission picker sets new participants' default, the switches allow or forbid
/// mentions and comments.
public struct ShareOptions: Codable, Hashable, Sendable {
    public static let permissionGroup = "permission"
    public static let readWrite = "permission.read-write"
    public static let readOnly = "permission.read-only"
    public static let settingsGroup = "settings"
    public static let allowMentions = "settings.allow-mentions"
    public static let allowComments = "settings.allow-comments"

    public var groups: [OptionsGroup]
    public var summary: String

    public init(groups: [OptionsGroup], summary: String) throws {
        self.groups = groups
        self.summary = summary
        try validate()
    }

    /// The defaults: a Permission picker ("Can make changes" / "Read only") and Additional Settings
    /// switches ("Allow mentions", "Allow comments").
    public static func defaults(readOnly isReadOnly: Bool = false, mentions: Bool = true, comments: Bool = true) -> ShareOptions {
        let groups = [
            OptionsGroup(identifier: permissionGroup, title: "Permission", kind: .picker, options: [
                CollaborationOption(identifier: readWrite, title: "Can make changes", isSelected: !isReadOnly),
                CollaborationOption(identifier: readOnly, title: "Read only", isSelected: isReadOnly),
            ]),
            OptionsGroup(identifier: settingsGroup, title: "Additional Settings", kind: .switches, options: [
                CollaborationOption(identifier: allowMentions, title: "Allow mentions", isSelected: mentions),
                CollaborationOption(identifier: allowComments, title: "Allow comments", isSelected: comments),
            ]),
        ]
        let summary = (isReadOnly ? "Only invited people can view." : "Only invited people can edit.")
            + (mentions ? "" : " Mentions off.") + (comments ? "" : " Comments off.")
        // The defaults satisfy every rule by construction.
        return ShareOptions(unchecked: groups, summary: summary)
    }

    /// Groups taken as they are: the defaults, valid by construction, and groups as a reader found
    /// them, checked later (`validate`), as after `Codable`.
    init(unchecked groups: [OptionsGroup], summary: String) {
        self.groups = groups
        self.summary = summary
    }

    /// Unique identifiers, non-empty titles, exactly one selection in every picker, and the groups
    /// Cohort enforces present.
    public func validate() throws {
        var seen = Set<String>()
        for group in groups {
            guard !group.title.isEmpty, !group.options.isEmpty, seen.insert(group.identifier).inserted else {
                throw CohortError(.malformed, "share options group '\(group.identifier)' is empty, untitled or repeated")
            }
            for option in group.options {
                guard !option.title.isEmpty, seen.insert(option.identifier).inserted else {
                    throw CohortError(.malformed, "share option '\(option.identifier)' is untitled or repeated")
                }
            }
            if group.kind == .picker, group.options.filter(\.isSelected).count != 1 {
                throw CohortError(.malformed, "picker '\(group.title)' must have exactly one selected option")
            }
        }
        guard option(Self.readWrite) != nil, option(Self.readOnly) != nil,
              option(Self.allowMentions) != nil, option(Self.allowComments) != nil
        else {
            throw CohortError(.malformed, "share options lack the permission picker or the mention and comment switches")
        }
    }

    func option(_ identifier: String) -> CollaborationOption? {
        groups.lazy.flatMap(\.options).first { $0.identifier == identifier }
    }

    /// The permission new participants get unless told otherwise.
    public var defaultPermission: Permission {
        option(Self.readOnly)?.isSelected == true ? .readOnly : .readWrite
    }

    public var mentionsAllowed: Bool { option(Self.allowMentions)?.isSelected == true }
    public var commentsAllowed: Bool { option(Self.allowComments)?.isSelected == true }
}
