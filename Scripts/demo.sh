#!/usr/bin/env bash
# The identity lifecycle with the real `cohort` binary: one person with two devices, a collaborator,
# an outsider; roots computed from cards; proofs made on each device and checked.
# Leaves its files under Workspaces/run/identity (ignored by git); a rerun starts clean.
# Exit 0 only if every step did what it announced.
set -euo pipefail
cd "$(dirname "$0")/.."

bin="$(swift build --show-bin-path)/cohort"
[ -x "$bin" ] || { echo "demo: $bin is missing; run 'make build' first" >&2; exit 1; }
run="$PWD/Workspaces/run/identity"
rm -rf "$run"
mkdir -p "$run"
cd "$run"

step=0
say() { step=$((step + 1)); printf '\n\033[1m%d. %s\033[0m\n' "$step" "$*"; }
fail() { printf '\033[31mdemo failed at step %d: %s\033[0m\n' "$step" "$*" >&2; exit 1; }
as() { local who=$1; shift; COHORT_HOME="$run/$who" "$bin" "$@"; }

collaboration="baking-recipes"
salt="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"

say "Ann creates her identity on her laptop (private key mode 0600 under COHORT_HOME)"
as ann-laptop id init --handle ann@example.com --name "Ann Lee" --device laptop
[ "$(stat -c %a ann-laptop/device.key)" = 600 ] || fail "device.key is not mode 0600"

say "Ann enrols her phone: a request from the phone, signed by the laptop, imported and signed on the phone"
as ann-phone id enroll --handle ann@example.com --device phone --output phone-request.json
as ann-laptop id add-device phone-request.json --output ann-card-v2.json
as ann-phone id import-card ann-card-v2.json
as ann-phone id card --output ann-card.json
as ann-laptop id import-card ann-card.json
as ann-laptop id show

say "Bo (a collaborator) and Eve (an outsider) create identities; Bo shares his card"
as bo id init --handle bo@example.com --name "Bo Chen" --device desktop >/dev/null
as eve id init --handle eve@example.com --name "Eve" --device laptop >/dev/null
as bo id card --output bo-card.json
echo "cards: ann-card.json (2 devices), bo-card.json (1 device)"

say "The owner computes each person's root for collaboration '$collaboration' (salt $salt) from their cards"
ann_root=$("$bin" id root --card ann-card.json --collaboration "$collaboration" --salt "$salt")
bo_root=$("$bin" id root --card bo-card.json --collaboration "$collaboration" --salt "$salt")
printf 'cohort-v1 %s\ncohort-v1 %s\n' "$ann_root" "$bo_root" > roots
cat roots
for device in ann-laptop ann-phone; do
  [ "$(as $device id root --collaboration "$collaboration" --salt "$salt")" = "$ann_root" ] || fail "$device computes another root"
done
echo "both of Ann's devices compute the same root: $ann_root"

say "Each device proves membership with its own diversified key; the proofs verify against the roots"
message=$(printf 'challenge %s' "$(date -u +%FT%TZ)" | base64 -w0)
for who in ann-laptop ann-phone bo; do
  as $who proof create --collaboration "$collaboration" --salt "$salt" --message "$message" --output "proof-$who.json"
  result=$("$bin" proof verify --roots roots --proof "proof-$who.json")
  echo "$who: $result"
  case "$result" in "ok "*) ;; *) fail "$who's proof did not verify" ;; esac
done
key_of() { grep -o '"publicKey" : "[^"]*"' "$1"; }
[ "$(key_of proof-ann-laptop.json)" != "$(key_of proof-ann-phone.json)" ] || fail "two devices used the same key"
echo "(the laptop and the phone signed with different keys that fold to the same root)"

say "Eve, never invited, is refused; so is a tampered proof"
as eve proof create --collaboration "$collaboration" --salt "$salt" --message "$message" --output proof-eve.json
if out=$("$bin" proof verify --roots roots --proof proof-eve.json 2>&1); then fail "Eve was accepted: $out"; fi
echo "eve: $out"
case "$out" in *E_UNKNOWN_ROOT*) ;; *) fail "expected E_UNKNOWN_ROOT" ;; esac
sed 's/"publicKeyIndex" : [0-9]*/"publicKeyIndex" : 99/' proof-bo.json > proof-tampered.json
if out=$("$bin" proof verify --roots roots --proof proof-tampered.json 2>&1); then fail "a tampered proof was accepted"; fi
echo "tampered: $out"
case "$out" in *E_BAD_PROOF*) ;; *) fail "expected E_BAD_PROOF" ;; esac

say "Bo is removed (his root marked revoked): his next proof is refused"
printf 'cohort-v1 %s\ncohort-v1 %s revoked\n' "$ann_root" "$bo_root" > roots
if out=$("$bin" proof verify --roots roots --proof proof-bo.json 2>&1); then fail "a revoked root was accepted"; fi
echo "bo: $out"
case "$out" in *E_REVOKED*) ;; *) fail "expected E_REVOKED" ;; esac

printf '\n\033[32mdemo complete: %d steps as announced.\033[0m Files are in %s\n' "$step" "$run"
