#!/usr/bin/env bash
# Notices per second through the durable outbox to the file sink and to a loopback webhook receiver
# (the reference Standard Webhooks package verifies every request), each against the sink driven directly.
#   bash Scripts/bench-sinks.sh [COUNT]          (default 2000; webhooks: at most 1000)
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-2000}
bin="$(bash Scripts/build-release.sh cohort-bench)"
work=$(mktemp -d)
secret="whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
# The receiver exits when its standard input closes: hold it open on a FIFO until this script ends.
mkfifo "$work/stdin"
python3 Tests/Scripts/webhook_receiver.py "$secret" "$work/received.jsonl" "$work/port" 0 '[]' < "$work/stdin" >/dev/null 2>&1 &
exec 5> "$work/stdin"
trap 'exec 5>&-; wait; rm -rf "$work"' EXIT
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
"$bin/cohort-bench" sinks "$work/bench" "$count" "http://127.0.0.1:$(cat "$work/port")/hooks" "$secret"
verified=$(grep -c '"verified": true' "$work/received.jsonl" || true)
echo
echo "the receiver verified $verified of $(wc -l < "$work/received.jsonl") requests"
