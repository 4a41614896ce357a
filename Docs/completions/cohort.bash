#!/bin/bash

__cohort_cursor_index_in_current_word() {
    local remaining="${COMP_LINE}"

    local word
    for word in "${COMP_WORDS[@]::COMP_CWORD}"; do
        remaining="${remaining##*([[:space:]])"${word}"*([[:space:]])}"
    done

    local -ir index="$((COMP_POINT - ${#COMP_LINE} + ${#remaining}))"
    if [[ "${index}" -le 0 ]]; then
        printf 0
    else
        printf %s "${index}"
    fi
}

# positional arguments:
#
# - 1: the current (sub)command's count of positional arguments
#
# required variables:
#
# - repeating_flags: the repeating flags that the current (sub)command can accept
# - non_repeating_flags: the non-repeating flags that the current (sub)command can accept
# - repeating_options: the repeating options that the current (sub)command can accept
# - non_repeating_options: the non-repeating options that the current (sub)command can accept
# - positional_number: value ignored
# - unparsed_words: unparsed words from the current command line
#
# modified variables:
#
# - non_repeating_flags: remove flags for this (sub)command that are already on the command line
# - non_repeating_options: remove options for this (sub)command that are already on the command line
# - positional_number: set to the current positional number
# - unparsed_words: remove all flags, options, and option values for this (sub)command
__cohort_offer_flags_options() {
    local -ir positional_count="${1}"
    positional_number=0

    local was_flag_option_terminator_seen=false
    local is_parsing_option_value=false

    local -ar unparsed_word_indices=("${!unparsed_words[@]}")
    local -i word_index
    for word_index in "${unparsed_word_indices[@]}"; do
        if "${is_parsing_option_value}"; then
            # This word is an option value:
            # Reset marker for next word iff not currently the last word
            [[ "${word_index}" -ne "${unparsed_word_indices[${#unparsed_word_indices[@]} - 1]}" ]] && is_parsing_option_value=false
            unset "unparsed_words[${word_index}]"
            # Do not process this word as a flag or an option
            continue
        fi

        local word="${unparsed_words["${word_index}"]}"
        if ! "${was_flag_option_terminator_seen}"; then
            case "${word}" in
            --)
                unset "unparsed_words[${word_index}]"
                # by itself -- is a flag/option terminator, but if it is the last word, it is the start of a completion
                if [[ "${word_index}" -ne "${unparsed_word_indices[${#unparsed_word_indices[@]} - 1]}" ]]; then
                    was_flag_option_terminator_seen=true
                fi
                continue
                ;;
            -*)
                # ${word} is a flag or an option
                # If ${word} is an option, mark that the next word to be parsed is an option value
                local option
                for option in "${repeating_options[@]}" "${non_repeating_options[@]}"; do
                    [[ "${word}" = "${option}" ]] && is_parsing_option_value=true && break
                done

                # Remove ${word} from ${non_repeating_flags} or ${non_repeating_options} so it isn't offered again
                local not_found=true
                local -i index
                for index in "${!non_repeating_flags[@]}"; do
                    if [[ "${non_repeating_flags[${index}]}" = "${word}" ]]; then
                        unset "non_repeating_flags[${index}]"
                        non_repeating_flags=("${non_repeating_flags[@]}")
                        not_found=false
                        break
                    fi
                done
                if "${not_found}"; then
                    for index in "${!non_repeating_flags[@]}"; do
                        if [[ "${non_repeating_flags[${index}]}" = "${word}" ]]; then
                            unset "non_repeating_flags[${index}]"
                            non_repeating_flags=("${non_repeating_flags[@]}")
                            break
                        fi
                    done
                fi
                unset "unparsed_words[${word_index}]"
                continue
                ;;
            esac
        fi

        # ${word} is neither a flag, nor an option, nor an option value
        if [[ "${positional_number}" -lt "${positional_count}" || "${positional_count}" -lt 0 ]]; then
            # ${word} is a positional
            ((positional_number++))
            unset "unparsed_words[${word_index}]"
        else
            if [[ -z "${word}" ]]; then
                # Could be completing a flag, option, or subcommand
                positional_number=-1
            else
                # ${word} is a subcommand or invalid, so stop processing this (sub)command
                positional_number=-2
            fi
            break
        fi
    done

    unparsed_words=("${unparsed_words[@]}")

    if\
        ! "${was_flag_option_terminator_seen}"\
        && ! "${is_parsing_option_value}"\
        && [[ ("${cur}" = -* && "${positional_number}" -ge 0) || "${positional_number}" -eq -1 ]]
    then
        COMPREPLY+=($(compgen -W "${repeating_flags[*]} ${non_repeating_flags[*]} ${repeating_options[*]} ${non_repeating_options[*]}" -- "${cur}"))
    fi
}

__cohort_add_completions() {
    local completion
    while IFS='' read -r completion; do
        COMPREPLY+=("${completion}")
    done < <(IFS=$'\n' compgen "${@}" -- "${cur}")
}

__cohort_custom_complete() {
    if [[ -n "${cur}" || -z ${COMP_WORDS[${COMP_CWORD}]} || "${COMP_LINE:${COMP_POINT}:1}" != ' ' ]]; then
        local -ar words=("${COMP_WORDS[@]}")
    else
        local -ar words=("${COMP_WORDS[@]::${COMP_CWORD}}" '' "${COMP_WORDS[@]:${COMP_CWORD}}")
    fi

    "${COMP_WORDS[0]}" "${@}" "${words[@]}"
}

_cohort() {
    local state
    state="$(shopt -p;shopt -po)"
    trap "${state//$'\n'/;}" RETURN
    shopt -s extglob
    set +o history +o posix

    local -xr SAP_SHELL=bash
    local -x SAP_SHELL_VERSION
    SAP_SHELL_VERSION="$(IFS='.';printf %s "${BASH_VERSINFO[*]}")"
    local -r SAP_SHELL_VERSION

    local -r cur="${2}"
    local -r prev="${3}"

    local -i positional_number
    local -a unparsed_words=("${COMP_WORDS[@]:1:${COMP_CWORD}}")

    local -a repeating_flags=()
    local -a non_repeating_flags=(--version -h --help)
    local -a repeating_options=()
    local -a non_repeating_options=()
    __cohort_offer_flags_options 0

    # Offer subcommand / subcommand argument completions
    local -r subcommand="${unparsed_words[0]}"
    unset 'unparsed_words[0]'
    unparsed_words=("${unparsed_words[@]}")
    case "${subcommand}" in
    id|start|participants|commit|comment|verify|export|notices|sinks|hook|proof|serve|publish|clone|sync|status|watch|history|restore|discard|version|help)
        # Offer subcommand argument completions
        "_cohort_${subcommand}"
        ;;
    *)
        # Offer subcommand completions
        COMPREPLY+=($(compgen -W 'id start participants commit comment verify export notices sinks hook proof serve publish clone sync status watch history restore discard version help' -- "${cur}"))
        ;;
    esac
}

_cohort_id() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=()
    __cohort_offer_flags_options 0

    # Offer subcommand / subcommand argument completions
    local -r subcommand="${unparsed_words[0]}"
    unset 'unparsed_words[0]'
    unparsed_words=("${unparsed_words[@]}")
    case "${subcommand}" in
    init|show|card|enroll|add-device|import-card|root)
        # Offer subcommand argument completions
        "_cohort_id_${subcommand}"
        ;;
    *)
        # Offer subcommand completions
        COMPREPLY+=($(compgen -W 'init show card enroll add-device import-card root' -- "${cur}"))
        ;;
    esac
}

_cohort_id_init() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--handle --name --device --home)
    __cohort_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--handle')
        return
        ;;
    '--name')
        return
        ;;
    '--device')
        return
        ;;
    '--home')
        return
        ;;
    esac
}

_cohort_id_show() {
    repeating_flags=()
    non_repeating_flags=(--json --version -h --help)
    repeating_options=()
    non_repeating_options=(--home)
    __cohort_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--home')
        return
        ;;
    esac
}

_cohort_id_card() {
    repeating_flags=()
    non_repeating_flags=(--force --partial --version -h --help)
    repeating_options=()
    non_repeating_options=(--output -o --home)
    __cohort_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--output'|'-o')
        return
        ;;
    '--home')
        return
        ;;
    esac
}

_cohort_id_enroll() {
    repeating_flags=()
    non_repeating_flags=(--force --version -h --help)
    repeating_options=()
    non_repeating_options=(--handle --device --output -o --home)
    __cohort_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--handle')
        return
        ;;
    '--device')
        return
        ;;
    '--output'|'-o')
        return
        ;;
    '--home')
        return
        ;;
    esac
}

_cohort_id_add-device() {
    repeating_flags=()
    non_repeating_flags=(--force --version -h --help)
    repeating_options=()
    non_repeating_options=(--output -o --home)
    __cohort_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--output'|'-o')
        return
        ;;
    '--home')
        return
        ;;
    esac
}

_cohort_id_import-card() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--home)
    __cohort_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--home')
        return
        ;;
    esac
}

_cohort_id_root() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--card --collaboration --salt --home)
    __cohort_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--card')
        return
        ;;
    '--collaboration')
        return
        ;;
    '--salt')
        return
        ;;
    '--home')
        return
        ;;
    esac
}

_cohort_start() {
    repeating_flags=()
    non_repeating_flags=(--read-only --no-mentions --no-comments --version -h --help)
    repeating_options=()
    non_repeating_options=(--title --local-id --home)
    __cohort_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--title')
        return
        ;;
    '--local-id')
        return
        ;;
    '--home')
        return
        ;;
    esac
}

_cohort_participants() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=()
    __cohort_offer_flags_options 0

    # Offer subcommand / subcommand argument completions
    local -r subcommand="${unparsed_words[0]}"
    unset 'unparsed_words[0]'
    unparsed_words=("${unparsed_words[@]}")
    case "${subcommand}" in
    list|add|remove|rotate)
        # Offer subcommand argument completions
        "_cohort_participants_${subcommand}"
        ;;
    *)
        # Offer subcommand completions
        COMPREPLY+=($(compgen -W 'list add remove rotate' -- "${cur}"))
        ;;
    esac
}

_cohort_participants_list() {
    repeating_flags=()
    non_repeating_flags=(--json --version -h --help)
    repeating_options=()
    non_repeating_options=(--workspace --home)
    __cohort_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--workspace')
        return
        ;;
    '--home')
        return
        ;;
    esac
}

_cohort_participants_add() {
    repeating_flags=()
    non_repeating_flags=(--read-only --read-write --no-mentions --no-comments --push --version -h --help)
    repeating_options=()
    non_repeating_options=(--remote --workspace --home)
    __cohort_offer_flags_options -1

    # Offer option value completions
    case "${prev}" in
    '--remote')
        return
        ;;
    '--workspace')
        return
        ;;
    '--home')
        return
        ;;
    esac
}

_cohort_participants_remove() {
    repeating_flags=()
    non_repeating_flags=(--push --version -h --help)
    repeating_options=()
    non_repeating_options=(--remote --workspace --home)
    __cohort_offer_flags_options -1

    # Offer option value completions
    case "${prev}" in
    '--remote')
        return
        ;;
    '--workspace')
        return
        ;;
    '--home')
        return
        ;;
    esac
}

_cohort_participants_rotate() {
    repeating_flags=()
    non_repeating_flags=(--push --version -h --help)
    repeating_options=()
    non_repeating_options=(--remote --workspace --home)
    __cohort_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--remote')
        return
        ;;
    '--workspace')
        return
        ;;
    '--home')
        return
        ;;
    esac
}

_cohort_commit() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--message -m --workspace --home)
    __cohort_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--message'|'-m')
        return
        ;;
    '--workspace')
        return
        ;;
    '--home')
        return
        ;;
    esac
}

_cohort_comment() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--text --workspace --home)
    __cohort_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--text')
        return
        ;;
    '--workspace')
        return
        ;;
    '--home')
        return
        ;;
    esac
}

_cohort_verify() {
    repeating_flags=()
    non_repeating_flags=(--json --version -h --help)
    repeating_options=()
    non_repeating_options=(--workspace --home)
    __cohort_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--workspace')
        return
        ;;
    '--home')
        return
        ;;
    esac
}

_cohort_export() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=()
    __cohort_offer_flags_options 0

    # Offer subcommand / subcommand argument completions
    local -r subcommand="${unparsed_words[0]}"
    unset 'unparsed_words[0]'
    unparsed_words=("${unparsed_words[@]}")
    case "${subcommand}" in
    allowed-signers)
        # Offer subcommand argument completions
        "_cohort_export_${subcommand}"
        ;;
    *)
        # Offer subcommand completions
        COMPREPLY+=($(compgen -W 'allowed-signers' -- "${cur}"))
        ;;
    esac
}

_cohort_export_allowed-signers() {
    repeating_flags=()
    non_repeating_flags=(--force --version -h --help)
    repeating_options=()
    non_repeating_options=(--output -o --workspace --home)
    __cohort_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--output'|'-o')
        return
        ;;
    '--workspace')
        return
        ;;
    '--home')
        return
        ;;
    esac
}

_cohort_notices() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=()
    __cohort_offer_flags_options 0

    # Offer subcommand / subcommand argument completions
    local -r subcommand="${unparsed_words[0]}"
    unset 'unparsed_words[0]'
    unparsed_words=("${unparsed_words[@]}")
    case "${subcommand}" in
    list|deliver)
        # Offer subcommand argument completions
        "_cohort_notices_${subcommand}"
        ;;
    *)
        # Offer subcommand completions
        COMPREPLY+=($(compgen -W 'list deliver' -- "${cur}"))
        ;;
    esac
}

_cohort_notices_list() {
    repeating_flags=()
    non_repeating_flags=(--json --follow --version -h --help)
    repeating_options=()
    non_repeating_options=(--interval --workspace --home)
    __cohort_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--interval')
        return
        ;;
    '--workspace')
        return
        ;;
    '--home')
        return
        ;;
    esac
}

_cohort_notices_deliver() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--workspace --home)
    __cohort_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--workspace')
        return
        ;;
    '--home')
        return
        ;;
    esac
}

_cohort_sinks() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=()
    __cohort_offer_flags_options 0

    # Offer subcommand / subcommand argument completions
    local -r subcommand="${unparsed_words[0]}"
    unset 'unparsed_words[0]'
    unparsed_words=("${unparsed_words[@]}")
    case "${subcommand}" in
    list|test|replay)
        # Offer subcommand argument completions
        "_cohort_sinks_${subcommand}"
        ;;
    *)
        # Offer subcommand completions
        COMPREPLY+=($(compgen -W 'list test replay' -- "${cur}"))
        ;;
    esac
}

_cohort_sinks_list() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--workspace --home)
    __cohort_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--workspace')
        return
        ;;
    '--home')
        return
        ;;
    esac
}

_cohort_sinks_test() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--workspace --home)
    __cohort_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--workspace')
        return
        ;;
    '--home')
        return
        ;;
    esac
}

_cohort_sinks_replay() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--repository --workspace --home)
    __cohort_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--repository')
        return
        ;;
    '--workspace')
        return
        ;;
    '--home')
        return
        ;;
    esac
}

_cohort_hook() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=()
    __cohort_offer_flags_options 0

    # Offer subcommand / subcommand argument completions
    local -r subcommand="${unparsed_words[0]}"
    unset 'unparsed_words[0]'
    unparsed_words=("${unparsed_words[@]}")
    case "${subcommand}" in
    install|pre-receive|post-receive|serve)
        # Offer subcommand argument completions
        "_cohort_hook_${subcommand}"
        ;;
    *)
        # Offer subcommand completions
        COMPREPLY+=($(compgen -W 'install pre-receive post-receive serve' -- "${cur}"))
        ;;
    esac
}

_cohort_hook_install() {
    repeating_flags=()
    non_repeating_flags=(--chain --version -h --help)
    repeating_options=()
    non_repeating_options=(--resident)
    __cohort_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--resident')
        return
        ;;
    esac
}

_cohort_hook_pre-receive() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=()
    __cohort_offer_flags_options 0
}

_cohort_hook_post-receive() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=()
    __cohort_offer_flags_options 0
}

_cohort_hook_serve() {
    repeating_flags=()
    non_repeating_flags=(--until-stdin-closes --version -h --help)
    repeating_options=()
    non_repeating_options=(--socket --concurrent-pushes)
    __cohort_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--socket')
        return
        ;;
    '--concurrent-pushes')
        return
        ;;
    esac
}

_cohort_proof() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=()
    __cohort_offer_flags_options 0

    # Offer subcommand / subcommand argument completions
    local -r subcommand="${unparsed_words[0]}"
    unset 'unparsed_words[0]'
    unparsed_words=("${unparsed_words[@]}")
    case "${subcommand}" in
    create|verify)
        # Offer subcommand argument completions
        "_cohort_proof_${subcommand}"
        ;;
    *)
        # Offer subcommand completions
        COMPREPLY+=($(compgen -W 'create verify' -- "${cur}"))
        ;;
    esac
}

_cohort_proof_create() {
    repeating_flags=()
    non_repeating_flags=(--force --version -h --help)
    repeating_options=()
    non_repeating_options=(--collaboration --salt --message --output -o --home)
    __cohort_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--collaboration')
        return
        ;;
    '--salt')
        return
        ;;
    '--message')
        return
        ;;
    '--output'|'-o')
        return
        ;;
    '--home')
        return
        ;;
    esac
}

_cohort_proof_verify() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--roots --proof)
    __cohort_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--roots')
        return
        ;;
    '--proof')
        return
        ;;
    esac
}

_cohort_serve() {
    repeating_flags=()
    non_repeating_flags=(--no-resident-verifier --version -h --help)
    repeating_options=(--trusted-proxy)
    non_repeating_options=(--data --listen --tls-cert --tls-key --public-url --max-push-mb --max-transfers --token-lifetime --challenge-lifetime --identity-rate --state --delivery-lease --verifier-socket --log-level)
    __cohort_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--data')
        return
        ;;
    '--listen')
        return
        ;;
    '--tls-cert')
        return
        ;;
    '--tls-key')
        return
        ;;
    '--public-url')
        return
        ;;
    '--max-push-mb')
        return
        ;;
    '--max-transfers')
        return
        ;;
    '--token-lifetime')
        return
        ;;
    '--challenge-lifetime')
        return
        ;;
    '--identity-rate')
        return
        ;;
    '--state')
        return
        ;;
    '--trusted-proxy')
        return
        ;;
    '--delivery-lease')
        return
        ;;
    '--verifier-socket')
        return
        ;;
    '--log-level')
        return
        ;;
    esac
}

_cohort_publish() {
    repeating_flags=()
    non_repeating_flags=(--json --version -h --help)
    repeating_options=()
    non_repeating_options=(--remote --workspace --home)
    __cohort_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--remote')
        return
        ;;
    '--workspace')
        return
        ;;
    '--home')
        return
        ;;
    esac
}

_cohort_clone() {
    repeating_flags=()
    non_repeating_flags=(--json --version -h --help)
    repeating_options=()
    non_repeating_options=(--home)
    __cohort_offer_flags_options 2

    # Offer option value completions
    case "${prev}" in
    '--home')
        return
        ;;
    esac
}

_cohort_sync() {
    repeating_flags=()
    non_repeating_flags=(--allow-mass-delete --json --version -h --help)
    repeating_options=()
    non_repeating_options=(--message -m --remote --mass-delete-share --wait --workspace --home)
    __cohort_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--message'|'-m')
        return
        ;;
    '--remote')
        return
        ;;
    '--mass-delete-share')
        return
        ;;
    '--wait')
        return
        ;;
    '--workspace')
        return
        ;;
    '--home')
        return
        ;;
    esac
}

_cohort_status() {
    repeating_flags=()
    non_repeating_flags=(--json --version -h --help)
    repeating_options=()
    non_repeating_options=(--remote --workspace --home)
    __cohort_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--remote')
        return
        ;;
    '--workspace')
        return
        ;;
    '--home')
        return
        ;;
    esac
}

_cohort_watch() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--interval --settle --remote --workspace --home)
    __cohort_offer_flags_options 0

    # Offer option value completions
    case "${prev}" in
    '--interval')
        return
        ;;
    '--settle')
        return
        ;;
    '--remote')
        return
        ;;
    '--workspace')
        return
        ;;
    '--home')
        return
        ;;
    esac
}

_cohort_history() {
    repeating_flags=()
    non_repeating_flags=(--json --version -h --help)
    repeating_options=()
    non_repeating_options=(--limit --workspace --home)
    __cohort_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--limit')
        return
        ;;
    '--workspace')
        return
        ;;
    '--home')
        return
        ;;
    esac
}

_cohort_restore() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--at --workspace --home)
    __cohort_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '--at')
        return
        ;;
    '--workspace')
        return
        ;;
    '--home')
        return
        ;;
    esac
}

_cohort_discard() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=(--workspace --home)
    __cohort_offer_flags_options -1

    # Offer option value completions
    case "${prev}" in
    '--workspace')
        return
        ;;
    '--home')
        return
        ;;
    esac
}

_cohort_version() {
    repeating_flags=()
    non_repeating_flags=(--version -h --help)
    repeating_options=()
    non_repeating_options=()
    __cohort_offer_flags_options 0
}

_cohort_help() {
    repeating_flags=()
    non_repeating_flags=(--version)
    repeating_options=()
    non_repeating_options=()
    __cohort_offer_flags_options -1
}

complete -o filenames -F _cohort cohort
