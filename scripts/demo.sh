#!/usr/bin/env bash
# make demo: the main job on copies of the bundled real stores (Qwen Code, an opencode database,
# Claude Code).
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

# A SQLite session store: opencode's database, built from the real dump plus legacy rows (CI has
# no sqlite3 shell, so a small Go helper builds it and digests its .dump).
(cd "$root" && ${GO:-go} build -o "$work/sqlitetool" ./engine/sqlite/sqlitetest/sqlitetool)
tool="$work/sqlitetool"
mkdir -p opencode
"$tool" build opencode/opencode.db "$root/fixtures/opencode-real/opencode.sql" "$root/engine/sqlite/testdata/opencode-legacy.sql"
dbsum=$("$tool" sha256 opencode/opencode.db)
dbcheck() { [ "$("$tool" check opencode/opencode.db)" = ok ] || { echo "demo: integrity_check failed" >&2; exit 1; }; }

step sessionfix scan opencode "   # found by its header bytes; names in part and in the event log"
echo "(two rows of this database are broken on purpose (engine/sqlite/testdata/opencode-legacy.sql): part"
echo " prt_legacy…09 holds a zstd-compressed payload and prt_legacy…10 a torn JSON value. Expect one"
echo " \"zstd-compressed\" and one \"invalid JSON\" warning for them below: both rows are reported and"
echo " left as they are.)"
"$bin" scan opencode

step sessionfix fix opencode "   # dry-run; the two planted rows are warned about again"
"$bin" fix opencode | tail -n 3
[ "$("$tool" sha256 opencode/opencode.db)" = "$dbsum" ] || { echo "demo: dry-run changed the database" >&2; exit 1; }
echo "(dry-run: the sha256 of the database's .dump is unchanged)"

step sessionfix fix --apply --yes --busy-timeout 500ms opencode "   # while an agent holds the write lock"
"$tool" lock opencode/opencode.db 30 > lock.out &
locker=$!
for _ in $(seq 100); do grep -q locked lock.out 2>/dev/null && break; sleep 0.05; done
code=0
"$bin" fix --apply --yes --busy-timeout 500ms --state-dir "$state" opencode | grep -E "in use|^rewrote" || code=$?
kill "$locker"; wait "$locker" 2>/dev/null || true
[ "$code" = 4 ] || { echo "demo: expected exit 4 for a locked store, got $code" >&2; exit 1; }
[ "$("$tool" sha256 opencode/opencode.db)" = "$dbsum" ] || { echo "demo: a refused fix changed the database" >&2; exit 1; }
echo "(exit 4: nothing was changed)"

step sessionfix fix --apply --yes --state-dir state opencode
"$bin" fix --apply --yes --state-dir "$state" opencode | tail -n 2
dbcheck
echo "(integrity_check: ok)"

step sessionfix scan opencode "   # after the fix"
"$bin" scan opencode | tail -n 1

step sessionfix undo --last --state-dir state
"$bin" undo --last --state-dir "$state"
dbcheck
[ "$("$tool" sha256 opencode/opencode.db)" = "$dbsum" ] || { echo "demo: undo did not restore the database" >&2; exit 1; }
echo "(the database's .dump is identical to the original again; integrity_check: ok)"

# Claude Code: a copied ~/.claude (sessions written by 1.0.51 and 2.1.332) with its claude.json
# beside it; the MCP servers' keys come from --mcp-config (Claude's own format).
cp -R "$root/fixtures/claude-real/dot-claude" dot-claude
cp "$root/fixtures/claude-real/claude.json" "$root/fixtures/claude-real/mcp-config.json" .
cchecksum() { find dot-claude -type f -print0 | sort -z | xargs -0 sha256sum; }
cbefore=$(cchecksum)

step sessionfix fix --mcp-config mcp-config.json --allow-shared dot-claude "   # dry-run: 1.0.51's names → 2.1.332's"
"$bin" fix --mcp-config mcp-config.json --allow-shared dot-claude
[ "$(cchecksum)" = "$cbefore" ] || { echo "demo: dry-run changed a Claude Code file" >&2; exit 1; }
echo "(dry-run changed no byte)"

step sessionfix fix --apply --yes --allow-shared --mcp-config mcp-config.json --state-dir state dot-claude
"$bin" fix --apply --yes --allow-shared --mcp-config mcp-config.json --state-dir "$state" dot-claude

step sessionfix undo --last --state-dir state
"$bin" undo --last --state-dir "$state"
[ "$(cchecksum)" = "$cbefore" ] || { echo "demo: undo did not restore every Claude Code byte" >&2; exit 1; }
echo "(every Claude Code file is byte-for-byte the original again)"
