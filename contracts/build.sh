#!/bin/sh
# build.sh regenerates contracts/build/*.abi.json and *.bin from contracts/src
# with solc-js 0.8.37 (npm). CI never runs it: the outputs are committed.
#
#   sh contracts/build.sh            # from the repository root
#
# It installs solc@0.8.37 into a throwaway directory (or $SOLC_DIR when set,
# to reuse an install) and compiles through solc's JS API (compile.js).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dir=${SOLC_DIR:-$(mktemp -d)}
if [ ! -d "$dir/node_modules/solc" ]; then
  (cd "$dir" && npm install --no-audit --no-fund --silent solc@0.8.37)
fi
NODE_PATH="$dir/node_modules" node "$here/compile.js"
