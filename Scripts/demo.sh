#!/usr/bin/env bash
# Cohort's whole lifecycle on this machine, with the real `cohort` binary and stock git, explained as
# it goes: a loopback server, four people, a published collaboration, clones, edits, a conflict, a
# rename and a mention, notices at three sinks, a second device, refusals, removal, verification.
#   bash Scripts/demo.sh [--batch]      (--batch: no pauses; what CI runs)
# Everything lands in Workspaces/run/ (ignored by git; COHORT_DEMO_DIR elsewhere); a rerun starts
# clean. Exit 0 only if every step did what it announced.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
batch=false
[ "${1:-}" = "--batch" ] && batch=true
[ -t 0 ] || batch=true

bindir="$(swift build --show-bin-path)"
bin="$bindir/cohort"
[ -x "$bin" ] && [ -x "$bindir/git-credential-cohort" ] || { echo "demo: build first (make build)" >&2; exit 1; }
run="${COHORT_DEMO_DIR:-$root/Workspaces/run}"     # the tests point it at a temporary folder
rm -rf "$run"
mkdir -p "$run"
cd "$run"
export PATH="$bindir:$PATH" GIT_TERMINAL_PROMPT=0
export GIT_CONFIG_GLOBAL="$run/gitconfig"        # the demo's git settings, not yours
git config --global credential.helper cohort
git config --global credential.useHttpPath true
git config --global user.name "Demo" && git config --global user.email "demo@example.com"
git config --global init.defaultBranch main

step=0
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  exec 3>&- 2>/dev/null || true
}
trap cleanup EXIT
say() {
  step=$((step + 1))
  printf '\n\033[1m%d. %s\033[0m\n' "$step" "$*"
  if ! $batch; then read -r -p "   (Enter to go on) " _ || true; fi
}
explain() { printf '   \033[2m%s\033[0m\n' "$*"; }
fail() { printf '\033[31mdemo failed at step %d: %s\033[0m\n' "$step" "$*" >&2; exit 1; }
as() { local who=$1; shift; COHORT_HOME="$run/homes/$who" "$@"; }
expect_refusal() {  # expect_refusal CODE COMMAND…: the command must fail, printing CODE
  local code=$1; shift
  local out
  if out=$("$@" 2>&1); then fail "expected $code, but it succeeded: $out"; fi
  printf '%s\n' "$out" | grep -E "E_|fatal|remote" | sed 's/^/   → /' | head -3
  case "$out" in *"$code"*) ;; *) fail "expected $code, got: $out" ;; esac
}

say "A Cohort server starts on a free loopback port, with a fresh data directory"
explain "Collaborations will live as bare repositories under data/collaborations, each with Cohort's hook."
"$bin" serve --data "$run/data" --listen 127.0.0.1:0 > serve.out 2> serve.log &
pids+=($!)
for _ in $(seq 1 200); do grep -q "listening on" serve.out 2>/dev/null && break; sleep 0.1; done
server=$(sed -n 's/^listening on \([^ ]*\).*/\1/p' serve.out)
[ -n "$server" ] || fail "the server did not start: $(cat serve.log)"
echo "   server: $server (JSON logs in Workspaces/run/serve.log)"

say "Four people make identities: Ann (owner, laptop and phone), Bo (editor), Dee (read only), Eve (never invited)"
explain "Each device's private key stays in its own COHORT_HOME, mode 0600. Cards carry public keys only."
as ann-laptop "$bin" id init --handle ann@example.com --name "Ann Lee" --device laptop >/dev/null
as ann-phone "$bin" id enroll --handle ann@example.com --device phone --output phone-request.json
as ann-laptop "$bin" id add-device phone-request.json --output ann-card.json
as ann-phone "$bin" id import-card ann-card.json >/dev/null
as bo "$bin" id init --handle bo@example.com --name "Bo Chen" --device desktop >/dev/null
as dee "$bin" id init --handle dee@example.com --name "Dee Ray" --device tablet >/dev/null
as eve "$bin" id init --handle eve@example.com --name "Eve" --device laptop >/dev/null
as bo "$bin" id card --output bo-card.json
as dee "$bin" id card --output dee-card.json
[ "$(stat -c %a homes/ann-laptop/device.key)" = 600 ] || fail "device.key is not mode 0600"
as ann-laptop "$bin" id show | sed 's/^/   /'

say "Ann starts \"Baking Recipes\" from the sample documents, adds Bo (can make changes) and Dee (read only), and publishes it"
mkdir -p ann && cp -r "$root/Workspaces/demo" ann/recipes
as ann-laptop "$bin" start ann/recipes --title "Baking Recipes" | sed 's/^/   identifier: /'
cd ann/recipes
as ann-laptop "$bin" participants add "$run/bo-card.json" --read-write | sed 's/^/   /'
as ann-laptop "$bin" participants add "$run/dee-card.json" --read-only | sed 's/^/   /'
link=$(as ann-laptop "$bin" publish "$server")
cd "$run"
echo "   the link: $link"
explain "A browser sees a small page there; a client asking for JSON sees:"
python3 -c "import sys,urllib.request;print(urllib.request.urlopen(urllib.request.Request(sys.argv[1],headers={'Accept':'application/json'})).read().decode())" "$link" \
  | sed 's/^/   /' || fail "the link does not answer"

say "Notices: Ann's sinks print to stdout, append JSON Lines to a file, and post to a webhook receiver"
explain "The receiver (Python, the reference standardwebhooks package) verifies every signature."
secret="whsec_$(head -c 32 /dev/urandom | base64 -w0)"
mkfifo receiver.stdin
python3 "$root/Tests/Scripts/webhook_receiver.py" "$secret" webhook.jsonl webhook.port < receiver.stdin &
pids+=($!)
exec 3>receiver.stdin
for _ in $(seq 1 100); do [ -s webhook.port ] && break; sleep 0.1; done
[ -s webhook.port ] || fail "the webhook receiver did not start (is the standardwebhooks package installed? make deps)"
cat > homes/ann-laptop/config.toml <<EOF
[[sinks]]
type = "stdout"

[[sinks]]
type = "file"
path = "$run/notices.jsonl"

[[sinks]]
type = "webhook"
url = "http://127.0.0.1:$(cat webhook.port)/cohort"
secret = "$secret"
EOF
echo "   sinks in Workspaces/run/homes/ann-laptop/config.toml"

say "Bo clones with cohort clone; Dee with stock git clone through git-credential-cohort; Eve is refused"
explain "Each clone answers a fresh server challenge with a proof signed by that device's own key."
as bo "$bin" clone "$link" bo/recipes >/dev/null
echo "   bo: $(ls bo/recipes | tr '\n' ' ')"
as dee git clone -q "$link" dee/recipes
echo "   dee: $(ls dee/recipes | tr '\n' ' ')"
expect_refusal E_UNKNOWN_ROOT as eve git clone -q "$link" eve/recipes
[ ! -e eve/recipes/sourdough.md ] || fail "Eve got files"

say "Ann and Bo edit one file each and sync"
printf '\nTip: brush with milk before baking.\n' >> ann/recipes/shortbread.md
printf '\nVariation: add 50 g rye flour.\n' >> bo/recipes/sourdough.md
(cd ann/recipes && as ann-laptop "$bin" sync | sed 's/^/   ann: /')
(cd bo/recipes && as bo "$bin" sync | sed 's/^/   bo: /')
(cd ann/recipes && as ann-laptop "$bin" sync | sed 's/^/   ann: /')
grep -q "rye flour" ann/recipes/sourdough.md || fail "Bo's edit did not reach Ann"
grep -q "brush with milk" bo/recipes/shortbread.md || fail "Ann's edit did not reach Bo"

say "Both change the same lines of the same file at once: the second sync keeps both versions"
explain "The version already on the server keeps the name; the other becomes a named conflict copy."
sed -i 's/^Bake at 160 °C.*/Bake at 150 °C for 45 minutes (Ann)./' ann/recipes/shortbread.md
sed -i 's/^Bake at 160 °C.*/Bake at 170 °C for 30 minutes (Bo)./' bo/recipes/shortbread.md
(cd ann/recipes && as ann-laptop "$bin" sync | sed 's/^/   ann: /')
(cd bo/recipes && as bo "$bin" sync | sed 's/^/   bo: /')
copy=$(cd bo/recipes && ls | grep "shortbread (conflict, bo@example.com" || true)
[ -n "$copy" ] || fail "no conflict copy was made"
grep -q "(Bo)" "bo/recipes/$copy" || fail "the conflict copy does not hold Bo's version"
grep -q "(Ann)" bo/recipes/shortbread.md || fail "the original does not hold Ann's version"
! grep -rq '<<<<<<<' bo/recipes --include='*.md' || fail "conflict markers were written"
echo "   both versions kept: shortbread.md (Ann's) and \"$copy\" (Bo's)"

say "Bo renames a document and comments on it, mentioning Ann; his sync shares both"
(cd bo/recipes && mv sourdough.md sourdough-loaf.md && as bo "$bin" sync | sed 's/^/   bo: /')
(cd bo/recipes && as bo "$bin" comment sourdough-loaf.md --text "Renamed it; @ann@example.com does the rye work for you?" | sed 's/^/   /')
(cd bo/recipes && as bo "$bin" sync | sed 's/^/   bo: /')

say "Ann syncs: the notices reach stdout, the JSON Lines file and the webhook"
(cd ann/recipes && as ann-laptop "$bin" sync | sed 's/^/   ann: /')
[ -f ann/recipes/sourdough-loaf.md ] || fail "the rename did not reach Ann"
[ -s notices.jsonl ] || fail "no notice in the file sink"
grep -q '"type":"content.renamed"' notices.jsonl || fail "the rename notice is missing from the file sink"
grep -q '"type":"mention"' notices.jsonl || fail "the mention did not reach Ann's sinks"
delivered=$(wc -l < webhook.jsonl)
unverified=$(grep -c '"verified": false' webhook.jsonl || true)
[ "$delivered" -gt 0 ] && [ "$unverified" = 0 ] || fail "the webhook receiver did not verify every request"
echo "   notices.jsonl: $(wc -l < notices.jsonl) lines; webhook: $delivered requests, every signature verified"

say "Ann's phone clones and syncs with its own key, and proves membership with it"
as ann-phone "$bin" clone "$link" ann-phone/recipes >/dev/null
printf '\nNote from the phone: try with brown butter.\n' >> ann-phone/recipes/shortbread.md
(cd ann-phone/recipes && as ann-phone "$bin" sync | sed 's/^/   phone: /')
identifier=${link##*/}
salt_hex=$(cd ann/recipes && python3 -c "import json,base64;print(base64.b64decode(json.loads(base64.b64decode(json.load(open('.cohort/collaboration.json'))['payload']))['salt']).hex())")
message=$(printf 'demo challenge' | base64 -w0)
as ann-laptop "$bin" proof create --collaboration "$identifier" --salt "$salt_hex" --message "$message" --output proof-laptop.json
as ann-phone "$bin" proof create --collaboration "$identifier" --salt "$salt_hex" --message "$message" --output proof-phone.json
root=$(as ann-laptop "$bin" id root --collaboration "$identifier" --salt "$salt_hex")
echo "cohort-v1 $root" > ann-root
for device in laptop phone; do
  result=$("$bin" proof verify --roots ann-root --proof "proof-$device.json")
  echo "   $device: $result, key $(python3 -c "import json;print(json.load(open('proof-$device.json'))['publicKey'][:16])")…"
  case "$result" in "ok "*) ;; *) fail "the $device's proof did not verify" ;; esac
done
explain "Two different device keys, one root: the owner's."

say "Dee (read only) cannot push; Ann removes Bo, and Bo's next sync is refused"
(cd dee/recipes && as dee git pull -q && echo "dee's idea" > idea.md && git add idea.md && git commit -q -m idea)
expect_refusal E_NOT_PERMITTED as dee git -C dee/recipes push -q origin main
(cd ann/recipes && as ann-laptop "$bin" sync >/dev/null && as ann-laptop "$bin" participants remove bo@example.com | sed 's/^/   /' \
  && as ann-laptop "$bin" sync | sed 's/^/   ann: /')
printf '\nAfter removal.\n' >> bo/recipes/shortbread.md
expect_refusal E_REVOKED as bo "$bin" sync --workspace bo/recipes
grep -q "After removal" bo/recipes/shortbread.md || fail "Bo's local edit was lost"
echo "   Bo's own edit stays in his folder"

say "cohort verify and stock git verify-commit confirm the whole history"
(cd ann/recipes && as ann-laptop "$bin" sync >/dev/null)
(cd ann/recipes && as ann-laptop "$bin" verify | sed 's/^/   /')
(cd ann/recipes && as ann-laptop "$bin" export allowed-signers --output "$run/allowed-signers" >/dev/null)
count=0
for commit in $(git -C ann/recipes rev-list HEAD); do
  git -C ann/recipes -c gpg.ssh.allowedSignersFile="$run/allowed-signers" verify-commit "$commit" 2>/dev/null || fail "git verify-commit refused $commit"
  count=$((count + 1))
done
echo "   git verify-commit: all $count commits have good signatures"
(cd ann/recipes && as ann-laptop "$bin" notices | tail -5 | sed 's/^/   /')

cleanup
pids=()
printf '\n\033[32mdemo complete: %d steps, each as announced.\033[0m\n' "$step"
echo "Look around in Workspaces/run: homes/ (identities), ann/ bo/ dee/ ann-phone/ (workspaces), data/ (the server),"
echo "notices.jsonl and webhook.jsonl (what the sinks received), serve.log (the server's structured log)."
