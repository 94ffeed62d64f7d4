#!/usr/bin/env bash
# make demo: the main job on a copy of the bundled real Qwen Code stores.
# Usage: scripts/demo.sh [path/to/sessionfix]
set -euo pipefail
bin=$(cd "$(dirname "${1:-bin/sessionfix}")" && pwd)/$(basename "${1:-bin/sessionfix}")
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/sessionfix-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT

cp -R "$root/fixtures/qwen-real/dot-qwen" "$work/dot-qwen"
state="$work/state"
cd "$work"
if [ -t 1 ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold= plain=; fi
step() { printf '\n%s$ %s%s\n' "$bold" "$*" "$plain"; }
checksum() { find dot-qwen -type f -print0 | sort -z | xargs -0 sha256sum; }
before=$(checksum)

step sessionfix scan dot-qwen
"$bin" scan dot-qwen

step sessionfix fix dot-qwen "   # dry-run: prints the plan, writes nothing"
"$bin" fix dot-qwen
[ "$(checksum)" = "$before" ] || { echo "demo: dry-run changed a file" >&2; exit 1; }
echo "(dry-run changed no byte)"

step sessionfix fix --apply --yes --state-dir state dot-qwen
"$bin" fix --apply --yes --state-dir "$state" dot-qwen

step sessionfix scan dot-qwen "   # after the fix: nothing left to rewrite"
"$bin" scan dot-qwen | tail -n 1

step sessionfix runs --state-dir state
"$bin" runs --state-dir "$state"

step sessionfix undo --last --state-dir state
"$bin" undo --last --state-dir "$state"
[ "$(checksum)" = "$before" ] || { echo "demo: undo did not restore every byte" >&2; exit 1; }
echo "(every file is byte-for-byte the original again)"
