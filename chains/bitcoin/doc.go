// Package bitcoin is the chain source for Bitcoin and Litecoin: one UTXO
// client, two wire decoders (btcd for Bitcoin; ltcd v0.23.6 for Litecoin,
// which also parses the HogEx transaction and the MWEB extension block).
//
// It talks JSON-RPC 1.0 over HTTP to Bitcoin Core, btcd or Litecoin Core
// (getblockcount, getblockhash, getblock <hash> 0, getrawmempool,
// getrawtransaction <txid> 0, getblockchaininfo) and decodes raw blocks
// locally: verbose JSON is an order of magnitude slower and carries float
// amounts.
//
// Guarantees:
//   - Every output of every transaction is matched, the coinbase and the
//     Litecoin HogEx (MWEB peg-outs) included, on its exact output script
//     (chains.Watched.Contains); amounts are integer satoshis/litoshis.
//     An output of the coinbase is marked Coinbase, one of the HogEx (a
//     peg-out) PegOut: each pays only at its maturity (100 and 6 blocks).
//   - A Block carries the hash it was asked for (the decoded header is
//     hashed and compared) and its parent hash, so reorgs are visible.
//   - A height above the tip is chains.ErrBlockNotFound; a response that does
//     not parse, does not decode or contradicts itself wraps
//     chains.ErrInvalidResponse and names the height or txid; it is never
//     skipped and never panics. Unreachable nodes, HTTP 5xx/429 and RPC
//     warmup (-28) are ErrTransient; node error objects are *RPCError.
//   - Response bodies are size-limited (Config.MaxResponseBytes).
//   - The RPC password travels only in the Authorization header; it never
//     appears in an error or a log line.
//   - Pending fetches and decodes each mempool transaction once and forgets
//     it when it leaves the mempool.
//   - FinalizedHeight is always 0: proof of work has no finality.
//   - Notify wakes the scanner: with Config.ZMQURL, Core's ZMQ hashblock,
//     hashtx, rawblock and rawtx messages (notify_zmq.go); otherwise
//     waitfornewblock long-polls on Bitcoin Core and Litecoin Core, with a
//     peek (getbestblockhash, getmempoolinfo) every 250 ms for their
//     mempool (mempool_peek.go); on btcd (which lacks waitfornewblock) the
//     websocket at /ws with notifyblocks and notifynewtransactions
//     (notify_ws.go).
package bitcoin
