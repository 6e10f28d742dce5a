// Package devnet starts real local peers for tests and for the sandbox
// (`paywatch-sandbox`): a throwaway PostgreSQL cluster (StartPostgres), btcd on
// regtest with a faucet (StartBtcd, AttachBtcd), Litecoin Core on regtest
// with a funded wallet and optional MWEB (StartLitecoind); anvil is in
// devnet/ethdev, so that devnet links no go-ethereum. The faucet key is a regtest-only sandbox key:
// paywatch itself never holds a private key. Every process runs on loopback, on a port that was bound and released just
// before use, under a data directory the caller owns; Stop is idempotent.
//
// For failover tests, a cluster can have streaming standbys (Standby,
// with pg_basebackup -R), be promoted (Promote), killed (Kill9) or frozen
// (Signal with SIGSTOP); Proxy is a TCP proxy that can blackhole a peer,
// as a partition does, without closing its connections.
//
// Missing binaries are an error (ErrMissing) that names the install command;
// tests turn it into a failure when CI is set and a skip otherwise.
package devnet
