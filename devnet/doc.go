// Package devnet starts real local peers for tests and for the sandbox
// (`paywatch-sandbox`): a throwaway PostgreSQL cluster (StartPostgres), btcd on
// regtest with a faucet (StartBtcd, AttachBtcd), Litecoin Core on regtest
// with a funded wallet and optional MWEB (StartLitecoind); anvil is in
// devnet/ethdev, so that devnet links no go-ethereum. The faucet key is a regtest-only sandbox key:
// paywatch itself never holds a private key. Every process runs on loopback, on a port that was bound and released just
// before use, under a data directory the caller owns; Stop is idempotent.
//
// Missing binaries are an error (ErrMissing) that names the install command;
// tests turn it into a failure when CI is set and a skip otherwise.
package devnet
