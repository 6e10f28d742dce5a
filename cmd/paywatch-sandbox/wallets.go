package main

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"strings"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcutil/base58"
	"github.com/ethereum/go-ethereum/crypto/keccak"
	solbase58 "github.com/mr-tron/base58"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/payment"
)

// The sandbox's funded wallets: well-known test keys, like anvil's dev
// accounts, that a developer's own code (TronWeb, @solana/web3.js, a
// wallet app) pays sandbox intents from. Their private keys are public
// knowledge: never send real money to them. They live in this command and
// in the files it writes under .paywatch/, never in the daemon, which stays
// watch-only.

// testMnemonic is the Hardhat/Foundry test mnemonic the sandbox's receiving
// keys come from too (addresses.SandboxKeys, at other paths).
const testMnemonic = "test test test test test test test test test test test junk"

// sandboxEthereumKey is the extended public key the sandbox watches on
// Ethereum: m/44'/60'/1' of the test mnemonic, the second account. Anvil
// funds m/44'/60'/0'/0/0..9 at genesis, deploys the sandbox tokens from the
// first and mints them to the first and the tenth; on
// addresses.SandboxKeys' m/44'/60'/0' the first intent's address would be
// that funded dev account and the mint a 1,000,000,000-token transfer in
// the inbox. On account 1' no watched address is a dev account.
const sandboxEthereumKey = "xpub6Ce9NcJvTk372KjsGfWqbcex5DumjpNquQLApoeQUavSCjEc823BV1tb4rXUuPuht8h2hSxkg2EXUaKUJmniJvRZAELxypsCzBFdtosmV76"

// sandboxTronKeyHex is the Tron wallet's private key: anvil's (and
// Hardhat's) dev account 9, m/44'/60'/0'/0/9 of the test mnemonic, the
// sandbox's Ethereum payer (sandboxEthPayer). A secp256k1 key is the same on
// both chains; its Tron address is 41 ‖ the Ethereum address. It is not on
// the Tron receiving path (m/44'/195'/0'/0/i), so it never pays itself.
const sandboxTronKeyHex = "2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6"

// tronWallet is a secp256k1 key and its 21-byte (41-prefixed) address.
type tronWallet struct {
	priv *btcec.PrivateKey
	addr []byte
}

// newTronWallet reads a hex private key (64 digits, 0x allowed).
func newTronWallet(keyHex string) (tronWallet, error) {
	b, err := hex.DecodeString(strings.TrimPrefix(keyHex, "0x"))
	if err != nil || len(b) != 32 {
		return tronWallet{}, fmt.Errorf("TRON_PRIVATE_KEY: want 64 hex digits")
	}
	priv, _ := btcec.PrivKeyFromBytes(b)
	h := keccak.NewLegacyKeccak256()
	h.Write(priv.PubKey().SerializeUncompressed()[1:])
	return tronWallet{priv: priv, addr: append([]byte{0x41}, h.Sum(nil)[12:]...)}, nil
}

func sandboxTronWallet() tronWallet {
	w, err := newTronWallet(sandboxTronKeyHex)
	if err != nil {
		panic(err) // a constant
	}
	return w
}

// Base58 is the T… address.
func (w tronWallet) Base58() string { return base58.CheckEncode(w.addr[1:], 0x41) }

// KeyHex is the private key as TronWeb takes it.
func (w tronWallet) KeyHex() string { return hex.EncodeToString(w.priv.Serialize()) }

// sandboxSolanaPath is the Solana wallet's SLIP-0010 path from the test
// mnemonic: m/44'/501'/0'/0', the first account of Phantom and Solflare
// (solana-keygen recover 'prompt://?key=0/0').
var sandboxSolanaPath = []uint32{44, 501, 0, 0}

// bip39Seed is BIP-39's seed: PBKDF2-HMAC-SHA512, 2048 rounds, salt
// "mnemonic" ‖ passphrase (the mnemonics used here are ASCII, so NFKD
// changes nothing).
func bip39Seed(mnemonic, passphrase string) []byte {
	seed, err := pbkdf2.Key(sha512.New, mnemonic, []byte("mnemonic"+passphrase), 2048, 64)
	if err != nil {
		panic(err) // only for invalid lengths
	}
	return seed
}

// slip10Ed25519 derives an ed25519 private key (seed) along a hardened
// path, SLIP-0010 (every index is hardened for ed25519).
func slip10Ed25519(seed []byte, path ...uint32) []byte {
	mac := hmac.New(sha512.New, []byte("ed25519 seed"))
	mac.Write(seed)
	i := mac.Sum(nil)
	key, chain := i[:32], i[32:]
	for _, p := range path {
		var data [37]byte
		copy(data[1:33], key)
		binary.BigEndian.PutUint32(data[33:], p|0x80000000)
		mac := hmac.New(sha512.New, chain)
		mac.Write(data[:])
		i = mac.Sum(nil)
		key, chain = i[:32], i[32:]
	}
	return key
}

// sandboxSolanaWallet is the Solana wallet's key.
func sandboxSolanaWallet() ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(slip10Ed25519(bip39Seed(testMnemonic, ""), sandboxSolanaPath...))
}

// sandboxSolanaMint is the sandbox SPL token's mint: the public key of
// ed25519.NewKeyFromSeed(sha256("paywatch sandbox solana token mint")).
func sandboxSolanaMint() [32]byte {
	s := sha256.Sum256([]byte("paywatch sandbox solana token mint"))
	var k [32]byte
	copy(k[:], ed25519.NewKeyFromSeed(s[:]).Public().(ed25519.PublicKey))
	return k
}

func publicKey32(k ed25519.PrivateKey) [32]byte {
	var out [32]byte
	copy(out[:], k.Public().(ed25519.PublicKey))
	return out
}

// writeSolanaKeypair writes key as solana-keygen does: a JSON array of the
// 64 bytes seed ‖ public key, which Keypair.fromSecretKey reads.
func writeSolanaKeypair(path string, key ed25519.PrivateKey) error {
	ints := make([]int, len(key))
	for i, b := range key {
		ints[i] = int(b)
	}
	b, err := json.Marshal(ints)
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(b, '\n'), 0o600)
}

// readSolanaKeypair reads a solana-keygen keypair file.
func readSolanaKeypair(path string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var ints []int
	if err := json.Unmarshal(b, &ints); err != nil || len(ints) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("%s: not a keypair file (a JSON array of 64 bytes)", path)
	}
	key := make(ed25519.PrivateKey, len(ints))
	for i, v := range ints {
		if v < 0 || v > 255 {
			return nil, fmt.Errorf("%s: not a keypair file (byte %d is %d)", path, i, v)
		}
		key[i] = byte(v)
	}
	if !ed25519.NewKeyFromSeed(key[:32]).Equal(key) {
		return nil, fmt.Errorf("%s: the public half does not match the secret key", path)
	}
	return key, nil
}

// fundWallets gives the test wallets their coins on the simulated nodes, as
// genesis state: TRX and the sandbox USDT-TRC20 (the contract the config
// names, executed as a TRC-20 token) on Tron; SOL, the sandbox SPL token's
// mint (6 decimals, the wallet its authority) and the wallet's token
// account on Solana.
func (s *sandbox) fundWallets() error {
	tw := sandboxTronWallet()
	s.tron.Fund(tw.addr, sandboxTronFunds)
	usdt, err := addresses.TronAccount(config.Default().Methods[payment.USDTTRC20].Contract)
	if err != nil {
		return err
	}
	s.tron.AddTRC20(usdt, "Tether USD", "USDT", 6)
	if err := s.tron.MintTRC20(usdt, tw.addr, big.NewInt(sandboxTokenSupply)); err != nil {
		return err
	}
	sw := publicKey32(sandboxSolanaWallet())
	s.sol.Fund(sw, sandboxSolanaFunds)
	mint := sandboxSolanaMint()
	s.sol.CreateMint(mint, 6, sw)
	_, err = s.sol.MintTo(mint, sw, sandboxTokenSupply)
	return err
}

// solanaAddress is a key's base58 address.
func solanaAddress(k [32]byte) string { return solbase58.Encode(k[:]) }
