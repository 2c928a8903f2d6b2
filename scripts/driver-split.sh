#!/usr/bin/env bash
# driver-split.sh rewrites the module's callers of the backend kit that
# moved from package store to package store/driver (the request rules only
# a backend applies, lost-answer settling, continuation tokens, the message
# text encoding, the typed lane's probe, the report of tries):
#
#   scripts/driver-split.sh        rewrite Go files and Markdown in place
#   scripts/driver-split.sh -n     list what would change, write nothing
#
# It rewrites store.X to driver.X for each moved name (code, comments,
# string literals, README.md and docs/), turns each comma-ok probe
# t.(store.TypedTable) into driver.Typed(t), and adds or drops the imports.
# It never touches package store itself: a use of a moved name there is
# listed for a person, and the script exits 3. It can run again after a
# rebase: what it already rewrote has nothing left to change. The list of
# moved names is in scripts/driversplit.go.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
go run scripts/driversplit.go "$@" "$root"
if [ "${1:-}" != "-n" ]; then
	unformatted="$(gofmt -l $(git ls-files '*.go'; git ls-files --others --exclude-standard '*.go'))"
	if [ -n "$unformatted" ]; then
		echo "driver-split: not gofmt-clean after the rewrite:" >&2
		echo "$unformatted" >&2
		exit 1
	fi
fi
