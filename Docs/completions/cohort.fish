function __cohort_should_offer_completions_for_flags_or_options -a expected_commands
    set -l non_repeating_flags_or_options $argv[2..]
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __cohort_parse_tokens
    test "$commands" = "$expected_commands"; and return $non_repeating_flags_or_options_absent
end

function __cohort_should_offer_completions_for_positional -a expected_commands positional_index_comparison expected_positional_index
    set -l non_repeating_flags_or_options
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __cohort_parse_tokens
    test "$commands" = "$expected_commands" -a \( "$positional_index" "$positional_index_comparison" "$expected_positional_index" \)
end

function __cohort_parse_tokens -S
    set -l unparsed_tokens (__cohort_tokens -pc)
    switch $unparsed_tokens[1]
    case 'cohort'
        __cohort_parse_subcommand 0 'version' 'h/help'
        switch $unparsed_tokens[1]
        case 'id'
            __cohort_parse_subcommand 0 'version' 'h/help'
            switch $unparsed_tokens[1]
            case 'init'
                __cohort_parse_subcommand 0 'handle=' 'name=' 'device=' 'home=' 'version' 'h/help'
            case 'show'
                __cohort_parse_subcommand 0 'json' 'home=' 'version' 'h/help'
            case 'card'
                __cohort_parse_subcommand 0 'o/output=' 'force' 'partial' 'home=' 'version' 'h/help'
            case 'enroll'
                __cohort_parse_subcommand 0 'handle=' 'device=' 'o/output=' 'force' 'home=' 'version' 'h/help'
            case 'add-device'
                __cohort_parse_subcommand 1 'o/output=' 'force' 'home=' 'version' 'h/help'
            case 'import-card'
                __cohort_parse_subcommand 1 'home=' 'version' 'h/help'
            case 'root'
                __cohort_parse_subcommand 0 'card=' 'collaboration=' 'salt=' 'home=' 'version' 'h/help'
            end
        case 'start'
            __cohort_parse_subcommand 1 'title=' 'local-id=' 'read-only' 'no-mentions' 'no-comments' 'home=' 'version' 'h/help'
        case 'participants'
            __cohort_parse_subcommand 0 'version' 'h/help'
            switch $unparsed_tokens[1]
            case 'list'
                __cohort_parse_subcommand 0 'json' 'workspace=' 'home=' 'version' 'h/help'
            case 'add'
                __cohort_parse_subcommand -r 1 'read-only' 'read-write' 'no-mentions' 'no-comments' 'push' 'remote=' 'workspace=' 'home=' 'version' 'h/help'
            case 'remove'
                __cohort_parse_subcommand -r 1 'push' 'remote=' 'workspace=' 'home=' 'version' 'h/help'
            case 'rotate'
                __cohort_parse_subcommand 0 'push' 'remote=' 'workspace=' 'home=' 'version' 'h/help'
            end
        case 'commit'
            __cohort_parse_subcommand 0 'm/message=' 'workspace=' 'home=' 'version' 'h/help'
        case 'comment'
            __cohort_parse_subcommand 1 'text=' 'workspace=' 'home=' 'version' 'h/help'
        case 'verify'
            __cohort_parse_subcommand 0 'json' 'workspace=' 'home=' 'version' 'h/help'
        case 'export'
            __cohort_parse_subcommand 0 'version' 'h/help'
            switch $unparsed_tokens[1]
            case 'allowed-signers'
                __cohort_parse_subcommand 0 'o/output=' 'force' 'workspace=' 'home=' 'version' 'h/help'
            end
        case 'notices'
            __cohort_parse_subcommand 0 'version' 'h/help'
            switch $unparsed_tokens[1]
            case 'list'
                __cohort_parse_subcommand 0 'json' 'follow' 'interval=' 'workspace=' 'home=' 'version' 'h/help'
            case 'deliver'
                __cohort_parse_subcommand 0 'workspace=' 'home=' 'version' 'h/help'
            end
        case 'sinks'
            __cohort_parse_subcommand 0 'version' 'h/help'
            switch $unparsed_tokens[1]
            case 'list'
                __cohort_parse_subcommand 0 'workspace=' 'home=' 'version' 'h/help'
            case 'test'
                __cohort_parse_subcommand 1 'workspace=' 'home=' 'version' 'h/help'
            case 'replay'
                __cohort_parse_subcommand 1 'repository=' 'workspace=' 'home=' 'version' 'h/help'
            end
        case 'hook'
            __cohort_parse_subcommand 0 'version' 'h/help'
            switch $unparsed_tokens[1]
            case 'install'
                __cohort_parse_subcommand 1 'chain' 'version' 'h/help'
            case 'pre-receive'
                __cohort_parse_subcommand 0 'version' 'h/help'
            case 'post-receive'
                __cohort_parse_subcommand 0 'version' 'h/help'
            end
        case 'proof'
            __cohort_parse_subcommand 0 'version' 'h/help'
            switch $unparsed_tokens[1]
            case 'create'
                __cohort_parse_subcommand 0 'collaboration=' 'salt=' 'message=' 'o/output=' 'force' 'home=' 'version' 'h/help'
            case 'verify'
                __cohort_parse_subcommand 0 'roots=' 'proof=' 'version' 'h/help'
            end
        case 'serve'
            __cohort_parse_subcommand 0 'data=' 'listen=' 'tls-cert=' 'tls-key=' 'public-url=' 'max-push-mb=' 'max-transfers=' 'token-lifetime=' 'challenge-lifetime=' 'identity-rate=' 'state=' 'trusted-proxy=+' 'delivery-lease=' 'log-level=' 'version' 'h/help'
        case 'publish'
            __cohort_parse_subcommand 1 'remote=' 'json' 'workspace=' 'home=' 'version' 'h/help'
        case 'clone'
            __cohort_parse_subcommand 2 'json' 'home=' 'version' 'h/help'
        case 'sync'
            __cohort_parse_subcommand 0 'm/message=' 'remote=' 'allow-mass-delete' 'mass-delete-share=' 'wait=' 'json' 'workspace=' 'home=' 'version' 'h/help'
        case 'status'
            __cohort_parse_subcommand 0 'remote=' 'json' 'workspace=' 'home=' 'version' 'h/help'
        case 'watch'
            __cohort_parse_subcommand 0 'interval=' 'settle=' 'remote=' 'workspace=' 'home=' 'version' 'h/help'
        case 'history'
            __cohort_parse_subcommand 1 'limit=' 'json' 'workspace=' 'home=' 'version' 'h/help'
        case 'restore'
            __cohort_parse_subcommand 1 'at=' 'workspace=' 'home=' 'version' 'h/help'
        case 'discard'
            __cohort_parse_subcommand -r 1 'workspace=' 'home=' 'version' 'h/help'
        case 'version'
            __cohort_parse_subcommand 0 'version' 'h/help'
        case 'help'
            __cohort_parse_subcommand -r 1 'version'
        end
    end
end

function __cohort_tokens
    if test (string split -m 1 -f 1 -- . "$FISH_VERSION") -gt 3
        commandline --tokens-raw $argv
    else
        commandline -o $argv
    end
end

function __cohort_parse_subcommand -S -a positional_count
    argparse -s r -- $argv
    set -l option_specs $argv[2..]
    set -l is_repeating_positional $_flag_r
    set -el _flag_r
    set -a commands $unparsed_tokens[1]
    set positional_index 0
    while true
        set -e unparsed_tokens[1]
        argparse -sn "$commands" $option_specs -- $unparsed_tokens 2> /dev/null
        set unparsed_tokens $argv
        set positional_index (math $positional_index + 1)
        for non_repeating_flag_or_option in $non_repeating_flags_or_options
            if set -ql "_flag_$(string replace -a - _ -- $non_repeating_flag_or_option)"
                set non_repeating_flags_or_options_absent 1
                break
            end
        end
        test (count $unparsed_tokens) -eq 0 -o \( -z "$is_repeating_positional" -a "$positional_index" -gt "$positional_count" \) && break
    end
end

function __cohort_complete_directories
    set -l token (commandline -t)
    string match -- '*/' $token
    set -l subdirs $token*/
    printf %s\n $subdirs
end

function __cohort_custom_completion
    set -x SAP_SHELL fish
    set -x SAP_SHELL_VERSION $FISH_VERSION
    set -l tokens (__cohort_tokens -p)
    if test -z "$(__cohort_tokens -t)"
        set -l index (count (__cohort_tokens -pc))
        set tokens $tokens[..$index] \'\' $tokens[(math $index + 1)..]
    end
    command $tokens[1] $argv $tokens
end

complete -c 'cohort' -f
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort" -eq 1' -fa 'id' -d 'Manage this device\'s identity: keys, the identity card, other devices, roots.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort" -eq 1' -fa 'start' -d 'Start a collaboration in DIR (new, or a folder whose files become its first content).'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort" -eq 1' -fa 'participants' -d 'List, add or remove the people who take part, or rotate your own root.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort" -eq 1' -fa 'commit' -d 'Commit every change, signed, with a notice per change.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort" -eq 1' -fa 'comment' -d 'Comment on a file; @handle of a participant mentions them.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort" -eq 1' -fa 'verify' -d 'Re-verify the whole history from the genesis commit by Cohort\'s rules.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort" -eq 1' -fa 'export' -d 'Export files for other tools.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort" -eq 1' -fa 'notices' -d 'Show the collaboration\'s notices, or deliver new ones to the configured sinks.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort" -eq 1' -fa 'sinks' -d 'List the configured notice sinks, send them a test notice, or deliver again what one gave up on.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort" -eq 1' -fa 'hook' -d 'The verification hook for any git server.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort" -eq 1' -fa 'proof' -d 'Make or check signed identity proofs (JSON), for scripts and other languages.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort" -eq 1' -fa 'serve' -d 'Host collaborations over git\'s smart HTTP; every pull and push needs a proof of identity.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort" -eq 1' -fa 'publish' -d 'Register this collaboration on a Cohort server (owner only) and push it; prints its link.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort" -eq 1' -fa 'clone' -d 'Clone a collaboration from its link, proving your identity with this device\'s key, and verify it.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort" -eq 1' -fa 'sync' -d 'Commit local changes, fetch, verify, merge (conflicts become copies), push, deliver notices.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort" -eq 1' -fa 'status' -d 'Local changes, ahead/behind the remote, conflict copies, the last sync, pending notices.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort" -eq 1' -fa 'watch' -d 'Sync whenever local changes settle, and every --interval seconds; stop with Ctrl-C or SIGTERM.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort" -eq 1' -fa 'history' -d 'Who changed a file and when, newest first, from the verified history.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort" -eq 1' -fa 'restore' -d 'Bring back a file as it was at an earlier commit, as a new signed edit.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort" -eq 1' -fa 'discard' -d 'Throw away local changes (all, or at the paths given), saving each version aside first.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort" -eq 1' -fa 'version' -d 'Print Cohort\'s version and the versions of the libraries it links.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort" -eq 1' -fa 'help' -d 'Show subcommand help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort id" -eq 1' -fa 'init' -d 'Create your identity and this device\'s master key.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort id" -eq 1' -fa 'show' -d 'Show this device\'s identity and card.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort id" -eq 1' -fa 'card' -d 'Print your identity card (JSON) to give to collaboration owners.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort id" -eq 1' -fa 'enroll' -d 'On a new device: create its key and a request to join your card.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort id" -eq 1' -fa 'add-device' -d 'Add a new device to your card from its enrolment request.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort id" -eq 1' -fa 'import-card' -d 'Import a new version of your card on this device, signing it if this device has not.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort id" -eq 1' -fa 'root' -d 'Print a person\'s cohort-v1 root hash for a collaboration, from their card.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id init" handle' -l 'handle' -d 'Your handle, e.g. you@example.com.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id init" name' -l 'name' -d 'Your display name.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id init" device' -l 'device' -d 'This device\'s name on your card (default: the host name).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id init" home' -l 'home' -d 'Identity directory (default: $COHORT_HOME, else ~/.config/cohort).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id init" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id init" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id show" json' -l 'json' -d 'Print JSON.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id show" home' -l 'home' -d 'Identity directory (default: $COHORT_HOME, else ~/.config/cohort).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id show" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id show" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id card" o output' -l 'output' -s 'o' -d 'Write to FILE instead of standard output.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id card" force' -l 'force' -d 'Replace FILE if it exists.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id card" partial' -l 'partial' -d 'Print the card even if some of its devices have not signed it yet.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id card" home' -l 'home' -d 'Identity directory (default: $COHORT_HOME, else ~/.config/cohort).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id card" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id card" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id enroll" handle' -l 'handle' -d 'Your handle, exactly as on your card.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id enroll" device' -l 'device' -d 'This device\'s name on your card (default: the host name).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id enroll" o output' -l 'output' -s 'o' -d 'Write to FILE instead of standard output.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id enroll" force' -l 'force' -d 'Replace FILE if it exists.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id enroll" home' -l 'home' -d 'Identity directory (default: $COHORT_HOME, else ~/.config/cohort).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id enroll" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id enroll" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id add-device" o output' -l 'output' -s 'o' -d 'Write to FILE instead of standard output.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id add-device" force' -l 'force' -d 'Replace FILE if it exists.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id add-device" home' -l 'home' -d 'Identity directory (default: $COHORT_HOME, else ~/.config/cohort).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id add-device" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id add-device" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id import-card" home' -l 'home' -d 'Identity directory (default: $COHORT_HOME, else ~/.config/cohort).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id import-card" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id import-card" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id root" card' -l 'card' -d 'The person\'s card (- for standard input; default: your own stored card).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id root" collaboration' -l 'collaboration' -d 'The collaboration identifier.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id root" salt' -l 'salt' -d 'The collaboration\'s salt, 32 hex digits.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id root" home' -l 'home' -d 'Identity directory (default: $COHORT_HOME, else ~/.config/cohort).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id root" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort id root" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort start" title' -l 'title' -d 'The collaboration\'s title.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort start" local-id' -l 'local-id' -d 'Your own identifier for it (default: the collaboration identifier).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort start" read-only' -l 'read-only' -d 'New participants get read-only permission unless told otherwise.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort start" no-mentions' -l 'no-mentions' -d 'Turn mentions off.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort start" no-comments' -l 'no-comments' -d 'Turn comments off.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort start" home' -l 'home' -d 'Identity directory (default: $COHORT_HOME, else ~/.config/cohort).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort start" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort start" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort participants" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort participants" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort participants" -eq 1' -fa 'list' -d 'List the participants as of the current commit.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort participants" -eq 1' -fa 'add' -d 'Add people from their identity cards (owner only).'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort participants" -eq 1' -fa 'remove' -d 'Remove people by handle or root (owner only); they are refused from then on.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort participants" -eq 1' -fa 'rotate' -d 'Replace your own root with the one of your current card (after adding or losing a device).'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort participants list" json' -l 'json' -d 'Print JSON.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort participants list" workspace' -l 'workspace' -d 'The workspace (default: the one containing the current directory).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort participants list" home' -l 'home' -d 'Identity directory (default: $COHORT_HOME, else ~/.config/cohort).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort participants list" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort participants list" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort participants add" read-only' -l 'read-only' -d 'Read-only permission (default: the collaboration\'s default).'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort participants add" read-write' -l 'read-write' -d 'Permission to make changes (default: the collaboration\'s default).'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort participants add" no-mentions' -l 'no-mentions' -d 'They may not mention others.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort participants add" no-comments' -l 'no-comments' -d 'They may not comment.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort participants add" push' -l 'push' -d 'Push the change now: a sync that shares committed work only, leaving the folder\'s edits for later.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort participants add" remote' -l 'remote' -d 'The remote to push to.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort participants add" workspace' -l 'workspace' -d 'The workspace (default: the one containing the current directory).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort participants add" home' -l 'home' -d 'Identity directory (default: $COHORT_HOME, else ~/.config/cohort).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort participants add" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort participants add" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort participants remove" push' -l 'push' -d 'Push the change now: a sync that shares committed work only, leaving the folder\'s edits for later.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort participants remove" remote' -l 'remote' -d 'The remote to push to.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort participants remove" workspace' -l 'workspace' -d 'The workspace (default: the one containing the current directory).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort participants remove" home' -l 'home' -d 'Identity directory (default: $COHORT_HOME, else ~/.config/cohort).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort participants remove" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort participants remove" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort participants rotate" push' -l 'push' -d 'Push the change now: a sync that shares committed work only, leaving the folder\'s edits for later.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort participants rotate" remote' -l 'remote' -d 'The remote to push to.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort participants rotate" workspace' -l 'workspace' -d 'The workspace (default: the one containing the current directory).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort participants rotate" home' -l 'home' -d 'Identity directory (default: $COHORT_HOME, else ~/.config/cohort).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort participants rotate" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort participants rotate" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort commit" m message' -l 'message' -s 'm' -d 'The commit message.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort commit" workspace' -l 'workspace' -d 'The workspace (default: the one containing the current directory).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort commit" home' -l 'home' -d 'Identity directory (default: $COHORT_HOME, else ~/.config/cohort).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort commit" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort commit" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort comment" text' -l 'text' -d 'The comment.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort comment" workspace' -l 'workspace' -d 'The workspace (default: the one containing the current directory).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort comment" home' -l 'home' -d 'Identity directory (default: $COHORT_HOME, else ~/.config/cohort).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort comment" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort comment" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort verify" json' -l 'json' -d 'Print JSON: {"ok", "commits", "checkedNow"} or {"ok": false, "code", "commit", "reason"}.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort verify" workspace' -l 'workspace' -d 'The workspace (default: the one containing the current directory).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort verify" home' -l 'home' -d 'Identity directory (default: $COHORT_HOME, else ~/.config/cohort).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort verify" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort verify" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort export" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort export" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort export" -eq 1' -fa 'allowed-signers' -d 'Write an OpenSSH allowed-signers file for every key that signed this history.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort export allowed-signers" o output' -l 'output' -s 'o' -d 'Write to FILE instead of standard output.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort export allowed-signers" force' -l 'force' -d 'Replace FILE if it exists.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort export allowed-signers" workspace' -l 'workspace' -d 'The workspace (default: the one containing the current directory).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort export allowed-signers" home' -l 'home' -d 'Identity directory (default: $COHORT_HOME, else ~/.config/cohort).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort export allowed-signers" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort export allowed-signers" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort notices" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort notices" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort notices" -eq 1' -fa 'list' -d 'The collaboration\'s notices, oldest first, from verified history.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort notices" -eq 1' -fa 'deliver' -d 'Deliver the notices that arrived since the last delivery to the configured sinks.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort notices list" json' -l 'json' -d 'JSON Lines, as the sinks write them: {"actor", "collaboration", "data", "id", "signed", "time", "type"} per notice.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort notices list" follow' -l 'follow' -d 'Keep printing new notices as commits arrive.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort notices list" interval' -l 'interval' -d 'Seconds between checks with --follow.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort notices list" workspace' -l 'workspace' -d 'The workspace (default: the one containing the current directory).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort notices list" home' -l 'home' -d 'Identity directory (default: $COHORT_HOME, else ~/.config/cohort).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort notices list" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort notices list" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort notices deliver" workspace' -l 'workspace' -d 'The workspace (default: the one containing the current directory).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort notices deliver" home' -l 'home' -d 'Identity directory (default: $COHORT_HOME, else ~/.config/cohort).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort notices deliver" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort notices deliver" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort sinks" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort sinks" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort sinks" -eq 1' -fa 'list' -d 'The sinks in effect here, where each is configured.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort sinks" -eq 1' -fa 'test' -d 'Send a test notice to every configured sink, or to the one named.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort sinks" -eq 1' -fa 'replay' -d 'Deliver again the notices a sink gave up on (and re-enable a disabled webhook).'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort sinks list" workspace' -l 'workspace' -d 'The workspace (default: the one containing the current directory).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort sinks list" home' -l 'home' -d 'Identity directory (default: $COHORT_HOME, else ~/.config/cohort).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort sinks list" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort sinks list" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort sinks test" workspace' -l 'workspace' -d 'The workspace (default: the one containing the current directory).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort sinks test" home' -l 'home' -d 'Identity directory (default: $COHORT_HOME, else ~/.config/cohort).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort sinks test" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort sinks test" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort sinks replay" repository' -l 'repository' -d 'A repository with Cohort\'s hooks, instead of the workspace.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort sinks replay" workspace' -l 'workspace' -d 'The workspace (default: the one containing the current directory).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort sinks replay" home' -l 'home' -d 'Identity directory (default: $COHORT_HOME, else ~/.config/cohort).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort sinks replay" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort sinks replay" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort hook" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort hook" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort hook" -eq 1' -fa 'install' -d 'Install Cohort\'s pre-receive and post-receive hooks into a repository (usually bare, on the server).'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort hook" -eq 1' -fa 'pre-receive' -d 'Run by git\'s pre-receive hook: verify the pushed refs read from standard input.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort hook" -eq 1' -fa 'post-receive' -d 'Run by git\'s post-receive hook: deliver the notices of the accepted push to the repository\'s sinks.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort hook install" chain' -l 'chain' -d 'Keep an existing pre-receive hook and run it after Cohort\'s checks.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort hook install" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort hook install" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort hook pre-receive" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort hook pre-receive" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort hook post-receive" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort hook post-receive" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort proof" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort proof" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort proof" -eq 1' -fa 'create' -d 'Sign a message with this device\'s key for a collaboration, with its proof of inclusion.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_positional "cohort proof" -eq 1' -fa 'verify' -d 'Verify a signed identity proof (JSON on standard input) against a list of roots.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort proof create" collaboration' -l 'collaboration' -d 'The collaboration identifier.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort proof create" salt' -l 'salt' -d 'The collaboration\'s salt, 32 hex digits.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort proof create" message' -l 'message' -d 'The message to sign, base64 (a server challenge, or any non-empty bytes).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort proof create" o output' -l 'output' -s 'o' -d 'Write to FILE instead of standard output.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort proof create" force' -l 'force' -d 'Replace FILE if it exists.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort proof create" home' -l 'home' -d 'Identity directory (default: $COHORT_HOME, else ~/.config/cohort).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort proof create" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort proof create" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort proof verify" roots' -l 'roots' -d 'The roots file.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort proof verify" proof' -l 'proof' -d 'Read the proof from FILE instead of standard input.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort proof verify" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort proof verify" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort serve" data' -l 'data' -d 'The data directory (created if missing).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort serve" listen' -l 'listen' -d 'Address and port to listen on; port 0 picks a free one.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort serve" tls-cert' -l 'tls-cert' -d 'PEM certificate chain: serve HTTPS (with --tls-key).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort serve" tls-key' -l 'tls-key' -d 'PEM private key of the certificate.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort serve" public-url' -l 'public-url' -d 'The URL clients reach this server at; links and challenges name it, and requests for another Host are refused. Required unless listening on loopback.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort serve" max-push-mb' -l 'max-push-mb' -d 'Largest push accepted, in MiB.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort serve" max-transfers' -l 'max-transfers' -d 'git transfers running at once; more are answered 429.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort serve" token-lifetime' -l 'token-lifetime' -d 'Seconds an access token lives.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort serve" challenge-lifetime' -l 'challenge-lifetime' -d 'Seconds a challenge may be answered (1 to 300).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort serve" identity-rate' -l 'identity-rate' -d 'Challenge and token requests per client address per minute.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort serve" state' -l 'state' -d 'A PostgreSQL database the instances of one server share (spent challenges, request limits, the server sinks\' outbox): postgres://USER@HOST[:PORT]/DATABASE, the password in PGPASSWORD. Also read from COHORT_SERVE_STATE. Without it the state stays in DIR/server.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort serve"' -l 'trusted-proxy' -d 'A proxy (nginx) in front of this server, by IP address: the client address its X-Forwarded-For names is used for limits and logs. Repeatable.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort serve" delivery-lease' -l 'delivery-lease' -d 'With --state: seconds an instance holds a server sink before another instance may take over its delivery (default 30).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort serve" log-level' -l 'log-level' -d 'trace, debug, info, notice, warning, error or critical.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort serve" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort serve" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort publish" remote' -l 'remote' -d 'The git remote to point at the link.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort publish" json' -l 'json' -d 'Print the outcome as JSON: {"link", "created", "pushed"}; no progress.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort publish" workspace' -l 'workspace' -d 'The workspace (default: the one containing the current directory).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort publish" home' -l 'home' -d 'Identity directory (default: $COHORT_HOME, else ~/.config/cohort).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort publish" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort publish" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort clone" json' -l 'json' -d 'Print the outcome as JSON: {"directory", "identifier", "title", "initiator", "participants", "commits"}; no progress.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort clone" home' -l 'home' -d 'Identity directory (default: $COHORT_HOME, else ~/.config/cohort).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort clone" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort clone" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort sync" m message' -l 'message' -s 'm' -d 'The message of the commit of local changes.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort sync" remote' -l 'remote' -d 'The remote to sync with.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort sync" allow-mass-delete' -l 'allow-mass-delete' -d 'Commit deletions even of more than the share below.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort sync" mass-delete-share' -l 'mass-delete-share' -d 'Hold back deleting more than this share of tracked files (0 to 1).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort sync" wait' -l 'wait' -d 'Seconds to wait for another sync of this workspace.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort sync" json' -l 'json' -d 'Print the report as JSON.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort sync" workspace' -l 'workspace' -d 'The workspace (default: the one containing the current directory).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort sync" home' -l 'home' -d 'Identity directory (default: $COHORT_HOME, else ~/.config/cohort).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort sync" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort sync" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort status" remote' -l 'remote' -d 'The remote to compare with.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort status" json' -l 'json' -d 'Print the status as JSON.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort status" workspace' -l 'workspace' -d 'The workspace (default: the one containing the current directory).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort status" home' -l 'home' -d 'Identity directory (default: $COHORT_HOME, else ~/.config/cohort).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort status" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort status" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort watch" interval' -l 'interval' -d 'Seconds between syncs when nothing changes locally.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort watch" settle' -l 'settle' -d 'Seconds local changes must be quiet before a sync.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort watch" remote' -l 'remote' -d 'The remote to sync with.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort watch" workspace' -l 'workspace' -d 'The workspace (default: the one containing the current directory).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort watch" home' -l 'home' -d 'Identity directory (default: $COHORT_HOME, else ~/.config/cohort).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort watch" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort watch" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort history" limit' -l 'limit' -d 'List at most this many changes.' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort history" json' -l 'json' -d 'Print the changes as JSON.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort history" workspace' -l 'workspace' -d 'The workspace (default: the one containing the current directory).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort history" home' -l 'home' -d 'Identity directory (default: $COHORT_HOME, else ~/.config/cohort).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort history" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort history" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort restore" at' -l 'at' -d 'The commit whose version to bring back (from `cohort history PATH`).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort restore" workspace' -l 'workspace' -d 'The workspace (default: the one containing the current directory).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort restore" home' -l 'home' -d 'Identity directory (default: $COHORT_HOME, else ~/.config/cohort).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort restore" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort restore" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort discard" workspace' -l 'workspace' -d 'The workspace (default: the one containing the current directory).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort discard" home' -l 'home' -d 'Identity directory (default: $COHORT_HOME, else ~/.config/cohort).' -rfka ''
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort discard" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort discard" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort version" version' -l 'version' -d 'Show the version.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort version" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'cohort' -n '__cohort_should_offer_completions_for_flags_or_options "cohort help" version' -l 'version' -d 'Show the version.'
