#!/usr/bin/env bash
# azurite-serve.sh is what `make azurite` runs inside scripts/with-azurite.sh:
# it prints how to reach the Azurite that script started (the connection
# string of the public development account, with the random loopback ports
# it chose) and waits until it is interrupted; with-azurite.sh then stops
# Azurite.
set -euo pipefail
cat <<EOF_MSG
Azurite is running on 127.0.0.1. In another shell:

  export TABLEKIT_AZURITE_CONN='${TABLEKIT_AZURITE_CONN}'
  go run ./examples/quickstart

Press Ctrl-C to stop it.
EOF_MSG
trap 'exit 0' INT TERM
while :; do sleep 1; done
