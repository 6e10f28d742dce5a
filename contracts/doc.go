// Package contracts holds the Solidity contracts paywatch tests and the
// sandbox deploy on a local Ethereum node, compiled once with solc-js 0.8.37
// (see build.sh) and embedded here, so neither CI nor the sandbox needs a
// compiler:
//
//   - TestToken: a minimal 6-decimal-capable ERC-20 (name, symbol, decimals
//     set at construction) whose mint is open to everyone, with a
//     transferThenRevert method for reverted-transfer tests;
//   - Forwarder: passes received ETH on through internal CALLs (the payment
//     is invisible in the block's transaction list);
//   - Reverter: refuses every ETH payment;
//   - Selfdestructor: sends its balance to a beneficiary by SELFDESTRUCT,
//     in its constructor (destroyed in the creating transaction) or later
//     (after Cancun only the balance moves);
//   - Relay: forwards ETH through a chain of nested CALLs of any depth, and
//     pays from a Selfdestructor it creates and destroys inside a call.
//
// Guarantees: the ABI and bytecode exported here are exactly the committed
// build/ outputs of the committed src/ sources; the parsed ABIs are checked at
// init, so a corrupt build fails loudly.
package contracts
