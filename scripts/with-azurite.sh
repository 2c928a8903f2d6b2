#!/usr/bin/env bash
# with-azurite.sh runs a command with a private Azurite on loopback:
#
#   scripts/with-azurite.sh go test -race ./...
#
# It installs the pinned Azurite from tools/azurite (npm ci, from the
# committed lockfile) when node_modules is missing, starts it on three free
# random ports of 127.0.0.1 with in-memory persistence, telemetry off and the
# API version check skipped, waits until all three services answer, exports
# TABLEKIT_AZURITE_CONN (the well-known development account with explicit
# endpoints) and TABLEKIT_REQUIRE_AZURITE=1, runs the command, and stops
# Azurite whatever happened. It exits with the command's exit code.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
tools="$root/tools/azurite"

if [ "$#" -eq 0 ]; then
	echo "usage: $0 command [args...]" >&2
	exit 2
fi
command -v node >/dev/null || { echo "with-azurite: node is not installed (Azurite needs Node.js 18 or later)" >&2; exit 1; }

if [ ! -x "$tools/node_modules/.bin/azurite" ]; then
	command -v npm >/dev/null || { echo "with-azurite: npm is not installed: it is needed once to install Azurite into $tools" >&2; exit 1; }
	echo "with-azurite: installing Azurite from $tools/package-lock.json" >&2
	(cd "$tools" && npm ci --no-audit --no-fund --loglevel=error) >&2
fi

# port_free succeeds when nothing listens on 127.0.0.1:$1.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# pick_port prints a free port in 20000-59999 not among the arguments.
pick_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 40000))
		case " $* " in *" $p "*) continue ;; esac
		if port_free "$p"; then echo "$p"; return; fi
	done
}

workdir="$(mktemp -d "${TMPDIR:-/tmp}/tablekit-azurite.XXXXXX")"
pid=""
cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null || true
	fi
	rm -rf "$workdir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start_azurite() {
	blob=$(pick_port)
	queue=$(pick_port "$blob")
	table=$(pick_port "$blob" "$queue")
	# Run in the scratch directory: Azurite may leave files in its cwd.
	(cd "$workdir" && exec "$tools/node_modules/.bin/azurite" --silent --inMemoryPersistence --disableTelemetry --skipApiVersionCheck \
		--blobHost 127.0.0.1 --blobPort "$blob" \
		--queueHost 127.0.0.1 --queuePort "$queue" \
		--tableHost 127.0.0.1 --tablePort "$table") >"$workdir/azurite.log" 2>&1 &
	pid=$!
	# Wait up to 30 s for all three services to accept connections.
	for _ in $(seq 300); do
		if ! kill -0 "$pid" 2>/dev/null; then
			return 1
		fi
		if ! port_free "$blob" && ! port_free "$queue" && ! port_free "$table"; then
			return 0
		fi
		sleep 0.1
	done
	return 1
}

started=""
for attempt in 1 2 3; do
	if start_azurite; then started=1; break; fi
	echo "with-azurite: Azurite did not start (attempt $attempt):" >&2
	cat "$workdir/azurite.log" >&2 || true
	cleanup_pid="$pid"; pid=""
	kill "$cleanup_pid" 2>/dev/null || true
done
[ -n "$started" ] || { echo "with-azurite: giving up" >&2; exit 1; }

account=devstoreaccount1
# The development account's key is public: it is documented with Azurite.
key='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
export TABLEKIT_AZURITE_CONN="DefaultEndpointsProtocol=http;AccountName=$account;AccountKey=$key;BlobEndpoint=http://127.0.0.1:$blob/$account;QueueEndpoint=http://127.0.0.1:$queue/$account;TableEndpoint=http://127.0.0.1:$table/$account;"
export TABLEKIT_REQUIRE_AZURITE=1
echo "with-azurite: Azurite $(cat "$tools/node_modules/azurite/package.json" | sed -n 's/^ *"version": *"\(.*\)".*/\1/p' | head -1) on 127.0.0.1 (blob $blob, queue $queue, table $table)" >&2

set +e
"$@"
status=$?
set -e
exit "$status"
