// Package walletjs finds the real wallet libraries the sandbox's tests drive
// from Go: TronWeb, @solana/web3.js and @solana/spl-token, installed with npm
// into a cache directory (.ci/run does it), run by the machine's node.
//
// Guarantees:
//   - Find succeeds only when node is on PATH and every package is installed
//     at exactly its pinned version (the package.json of each is read), so a
//     test never runs against a library other than the one it names;
//   - otherwise the error wraps devnet.ErrMissing and names the npm command
//     that installs the pinned versions (tests turn it into a failure under
//     CI and a skip elsewhere, with devnettest.Need);
//   - Command runs a CommonJS script with NODE_PATH set to the cache's
//     node_modules and nothing else of the environment but what it is given
//     and PATH/HOME.
package walletjs
