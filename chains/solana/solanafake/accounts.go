package solanafake

import (
	"encoding/binary"
	"fmt"

	"github.com/mr-tron/base58"

	sol "github.com/gagliardetto/solana-go"
)

// Program ids the simulated cluster knows (solana-sdk-ids, spl).
const (
	TokenProgram           = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"
	AssociatedTokenProgram = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL"
	ComputeBudgetProgram   = "ComputeBudget111111111111111111111111111111"
	MemoProgram            = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr"
	nativeLoader           = "NativeLoader1111111111111111111111111111111"
	bpfLoader2             = "BPFLoader2111111111111111111111111111111111"
)

// programs are the executable accounts: what a transaction may invoke.
// Anything else is ProgramAccountNotFound.
var programs = map[string]string{ // program id -> owner (loader)
	SystemProgram:          nativeLoader,
	ComputeBudgetProgram:   nativeLoader,
	TokenProgram:           bpfLoader2,
	AssociatedTokenProgram: bpfLoader2,
	MemoProgram:            bpfLoader2,
}

// Rent is the cluster's rent (mainnet values): an account is rent-exempt
// with (data length + 128) × 3480 × 2 lamports.
const (
	rentPerByteYear        = 3480
	rentExemptThreshold    = 2
	accountStorageOverhead = 128
	// tokenAccountSize and mintSize are spl-token's Account::LEN and Mint::LEN.
	tokenAccountSize = 165
	mintSize         = 82
	// rentEpochExempt is the rentEpoch of every rent-exempt account (u64::MAX).
	rentEpochExempt = ^uint64(0)
)

// rentExempt is Rent::minimum_balance(dataLen).
func rentExempt(dataLen int) uint64 {
	return uint64(dataLen+accountStorageOverhead) * rentPerByteYear * rentExemptThreshold
}

// accountData is the part of an account beyond its lamports (which stay in
// Node.balances): its owner program and data. An account without an entry
// is owned by the System program and has no data.
type accountData struct {
	owner string
	data  []byte
}

// ownerOf returns an account's owner program.
func (n *Node) ownerOf(key string) string {
	if o, ok := programs[key]; ok {
		return o
	}
	if a := n.accounts[key]; a != nil {
		return a.owner
	}
	return SystemProgram
}

// dataOf returns an account's data (nil for none).
func (n *Node) dataOf(key string) []byte {
	if a := n.accounts[key]; a != nil {
		return a.data
	}
	return nil
}

// exists reports whether an account exists: it has lamports or is a program.
func (n *Node) exists(key string) bool {
	if _, ok := programs[key]; ok {
		return true
	}
	return n.balances[key] > 0
}

// Fund credits lamports to key, as a private cluster's genesis does (no
// transaction). It is the sandbox's faucet; the account is a System
// account.
func (n *Node) Fund(key [32]byte, lamports uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.balances[base58.Encode(key[:])] += lamports
}

// tokenAccount is spl-token's Account (165 bytes, Pack layout).
type tokenAccount struct {
	mint, owner string
	amount      uint64
	state       byte // 0 uninitialized, 1 initialized, 2 frozen
}

func (a tokenAccount) pack() []byte {
	b := make([]byte, tokenAccountSize)
	mint, _ := base58.Decode(a.mint)
	owner, _ := base58.Decode(a.owner)
	copy(b[0:32], mint)
	copy(b[32:64], owner)
	binary.LittleEndian.PutUint64(b[64:72], a.amount)
	b[108] = a.state
	return b
}

// unpackTokenAccount reads an initialized token account; false for anything
// else (spl-token's Account::unpack).
func unpackTokenAccount(b []byte) (tokenAccount, bool) {
	if len(b) != tokenAccountSize || b[108] == 0 || b[108] > 2 {
		return tokenAccount{}, false
	}
	return tokenAccount{
		mint:   base58.Encode(b[0:32]),
		owner:  base58.Encode(b[32:64]),
		amount: binary.LittleEndian.Uint64(b[64:72]),
		state:  b[108],
	}, true
}

// mintState is spl-token's Mint (82 bytes).
type mintState struct {
	authority string // "" for none
	supply    uint64
	decimals  uint8
}

func (m mintState) pack() []byte {
	b := make([]byte, mintSize)
	if m.authority != "" {
		binary.LittleEndian.PutUint32(b[0:4], 1)
		a, _ := base58.Decode(m.authority)
		copy(b[4:36], a)
	}
	binary.LittleEndian.PutUint64(b[36:44], m.supply)
	b[44] = m.decimals
	b[45] = 1 // is_initialized
	return b
}

func unpackMint(b []byte) (mintState, bool) {
	if len(b) != mintSize || b[45] != 1 {
		return mintState{}, false
	}
	m := mintState{supply: binary.LittleEndian.Uint64(b[36:44]), decimals: b[44]}
	if binary.LittleEndian.Uint32(b[0:4]) == 1 {
		m.authority = base58.Encode(b[4:36])
	}
	return m, true
}

// mintOf reads a mint account of the Token program.
func (n *Node) mintOf(key string) (mintState, bool) {
	if n.ownerOf(key) != TokenProgram {
		return mintState{}, false
	}
	return unpackMint(n.dataOf(key))
}

// tokenAccountOf reads a token account of the Token program.
func (n *Node) tokenAccountOf(key string) (tokenAccount, bool) {
	if n.ownerOf(key) != TokenProgram {
		return tokenAccount{}, false
	}
	return unpackTokenAccount(n.dataOf(key))
}

// AssociatedTokenAddress is spl-associated-token-account's address of
// owner's account for mint (the PDA of [owner, Token program, mint]).
func AssociatedTokenAddress(owner, mint [32]byte) ([32]byte, error) {
	a, _, err := sol.FindAssociatedTokenAddress(sol.PublicKeyFromBytes(owner[:]), sol.PublicKeyFromBytes(mint[:]))
	if err != nil {
		return [32]byte{}, err
	}
	return a, nil
}

// CreateMint makes mint a Token-program mint with decimals and a mint
// authority, rent-exempt, as genesis state (no transaction). A mint that
// exists is left alone.
func (n *Node) CreateMint(mint [32]byte, decimals uint8, authority [32]byte) {
	n.mu.Lock()
	defer n.mu.Unlock()
	key := base58.Encode(mint[:])
	if _, ok := n.mintOf(key); ok {
		return
	}
	n.setAccount(key, TokenProgram, mintState{authority: base58.Encode(authority[:]), decimals: decimals}.pack())
	n.balances[key] = rentExempt(mintSize)
}

// MintTo credits amount of mint to owner's associated token account,
// creating it (rent-exempt, funded by genesis) when missing, as genesis
// state. It returns the token account's address.
func (n *Node) MintTo(mint, owner [32]byte, amount uint64) ([32]byte, error) {
	ata, err := AssociatedTokenAddress(owner, mint)
	if err != nil {
		return ata, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	mk := base58.Encode(mint[:])
	m, ok := n.mintOf(mk)
	if !ok {
		return ata, fmt.Errorf("solanafake: %s is not a mint (CreateMint first)", mk)
	}
	ak := base58.Encode(ata[:])
	acc, ok := n.tokenAccountOf(ak)
	if !ok {
		acc = tokenAccount{mint: mk, owner: base58.Encode(owner[:]), state: 1}
		n.balances[ak] = rentExempt(tokenAccountSize)
	}
	acc.amount += amount
	m.supply += amount
	n.setAccount(ak, TokenProgram, acc.pack())
	n.setAccount(mk, TokenProgram, m.pack())
	return ata, nil
}

// TokenBalance returns the amount in a token account (0 when it is none).
func (n *Node) TokenBalance(account [32]byte) uint64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	a, _ := n.tokenAccountOf(base58.Encode(account[:]))
	return a.amount
}

func (n *Node) setAccount(key, owner string, data []byte) {
	if n.accounts == nil {
		n.accounts = map[string]*accountData{}
	}
	n.accounts[key] = &accountData{owner: owner, data: data}
}
