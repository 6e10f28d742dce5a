package addresses

import (
	"crypto/hmac"
	"crypto/sha512"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto/keccak"

	"github.com/paywatch/paywatch/payment"
)

// Address is one address of a network: its binary watch key and display form.
type Address struct {
	// Network is the network the address belongs to.
	Network payment.Network
	// Key is the binary watch key scanners match on: the output script for
	// BTC/LTC (P2WPKH 0x00 0x14 <hash160> for derived addresses), the 20-byte
	// account for ETH and Tron, the 32-byte public key for Solana.
	Key []byte
	// String is the canonical display form: bc1…/tb1…/bcrt1…, ltc1…/tltc1…/
	// rltc1…, EIP-55 0x…, Tron T…, Solana base58.
	String string
	// Index is the derivation index, -1 for pool and parsed addresses.
	Index int64
}

// Deriver derives the receive address of index i (external chain /0/i below
// the account key).
type Deriver interface {
	Derive(index uint32) (Address, error)
}

// MaxIndex is the highest index Derive accepts: BIP32 public derivation
// cannot produce hardened children.
const MaxIndex = hdkeychain.HardenedKeyStart - 1

// hdDeriver derives from the external chain key (account/0). It keeps that
// key's point in Jacobian form so that each Derive costs one HMAC-SHA512, one
// base point multiplication and one addition (BIP32 CKDpub), without
// decompressing the parent key again.
type hdDeriver struct {
	network   payment.Network
	hrp       string
	chainCode [32]byte
	pubKey    [33]byte
	point     btcec.JacobianPoint
}

var _ Deriver = (*hdDeriver)(nil)

// NewDeriver returns the Deriver of network for an account-level extended
// public key (depth 3, e.g. m/84'/0'/0' for BTC, m/84'/2'/0' for LTC,
// m/44'/60'/0' for ETH, m/44'/195'/0' for Tron) with any public version
// bytes. chain ("mainnet", "testnet", "regtest") selects the BTC/LTC bech32
// prefix. Private keys are refused with ErrPrivateKey; Solana returns
// ErrNoDerivation.
//
// A deriver made before for the same arguments is answered from memory:
// the daemon makes every store's derivers at each start and each reload of
// the stores, and the external chain's key is most of a deriver's making.
func NewDeriver(network payment.Network, accountKey string, chain string) (Deriver, error) {
	k := deriverKey{network, accountKey, chain}
	derivers.mu.Lock()
	d, ok := derivers.m[k]
	derivers.mu.Unlock()
	if ok {
		return d, nil
	}
	d, err := makeDeriver(network, accountKey, chain)
	if err != nil {
		return nil, err
	}
	derivers.mu.Lock()
	if len(derivers.m) >= maxDerivers {
		clear(derivers.m) // a process with that many keys is a test's
	}
	derivers.m[k] = d
	derivers.mu.Unlock()
	return d, nil
}

// derivers are the derivers made so far (a deriver is immutable and safe
// for concurrent use), at most maxDerivers.
var derivers = struct {
	mu sync.Mutex
	m  map[deriverKey]Deriver
}{m: map[deriverKey]Deriver{}}

const maxDerivers = 1024

type deriverKey struct {
	network           payment.Network
	accountKey, chain string
}

func makeDeriver(network payment.Network, accountKey string, chain string) (Deriver, error) {
	params, err := checkChain(network, chain)
	if err != nil {
		return nil, err
	}
	if network == payment.Solana {
		return nil, ErrNoDerivation
	}
	k, err := parseAccountKey(accountKey)
	if err != nil {
		return nil, err
	}
	external, err := k.hd().Derive(0)
	if err != nil {
		// Only ErrInvalidChild (probability < 2^-127) can happen here.
		return nil, fmt.Errorf("%w: cannot derive the external chain: %v", ErrInvalidKey, err)
	}
	pub, err := external.ECPubKey()
	if err != nil {
		return nil, fmt.Errorf("%w: external chain key: %v", ErrInvalidKey, err)
	}
	d := &hdDeriver{network: network, hrp: params.hrp}
	copy(d.chainCode[:], external.ChainCode())
	copy(d.pubKey[:], pub.SerializeCompressed())
	pub.AsJacobian(&d.point)
	return d, nil
}

// Derive returns the receive address of index (account/0/index). index must
// be at most MaxIndex. The same deriver and index always give the same
// address; Derive is safe for concurrent use.
func (d *hdDeriver) Derive(index uint32) (Address, error) {
	if index > MaxIndex {
		return Address{}, fmt.Errorf("%w: index %d is above %d (hardened indexes cannot be derived from a public key)", ErrIndexOutOfRange, index, MaxIndex)
	}
	var p btcec.JacobianPoint
	if err := d.child(index, &p); err != nil {
		return Address{}, fmt.Errorf("derive index %d: %w", index, err)
	}
	p.ToAffine()
	return d.address(index, btcec.NewPublicKey(&p.X, &p.Y))
}

// DeriveRange is d.Derive for the n indexes from first, in order. From a
// Deriver of NewDeriver it converts the n child points out of Jacobian
// form with one field inversion in all (Montgomery's trick) instead of one
// each, which is about a quarter of the cost of a derivation.
func DeriveRange(d Deriver, first uint32, n int) ([]Address, error) {
	if n <= 0 {
		return nil, nil
	}
	if last := uint64(first) + uint64(n) - 1; last > MaxIndex {
		return nil, fmt.Errorf("%w: index %d is above %d (hardened indexes cannot be derived from a public key)", ErrIndexOutOfRange, last, MaxIndex)
	}
	hd, ok := d.(*hdDeriver)
	if !ok {
		out := make([]Address, n)
		for i := range out {
			a, err := d.Derive(first + uint32(i))
			if err != nil {
				return nil, err
			}
			out[i] = a
		}
		return out, nil
	}
	ps := make([]btcec.JacobianPoint, n)
	for i := range ps {
		if err := hd.child(first+uint32(i), &ps[i]); err != nil {
			return nil, fmt.Errorf("derive index %d: %w", first+uint32(i), err)
		}
	}
	toAffine(ps)
	out := make([]Address, n)
	for i := range ps {
		a, err := hd.address(first+uint32(i), btcec.NewPublicKey(&ps[i].X, &ps[i].Y))
		if err != nil {
			return nil, err
		}
		out[i] = a
	}
	return out, nil
}

// toAffine is ToAffine for every point of ps, none of them infinite, with
// one field inversion: the inverse of each Z comes from the inverse of
// their product and the products of the Zs before it.
func toAffine(ps []btcec.JacobianPoint) {
	before := make([]btcec.FieldVal, len(ps)) // before[i] = Z0·…·Z(i-1)
	var acc btcec.FieldVal
	acc.SetInt(1)
	for i := range ps {
		before[i].Set(&acc)
		acc.Mul(&ps[i].Z)
	}
	inv := acc.Inverse() // 1/(Z0·…·Zn-1), then 1/(Z0·…·Zi) going down
	for i := len(ps) - 1; i >= 0; i-- {
		var zInv, zInv2 btcec.FieldVal
		zInv.Mul2(inv, &before[i]) // 1/Zi
		inv.Mul(&ps[i].Z)
		zInv2.SquareVal(&zInv)
		ps[i].X.Mul(&zInv2)
		ps[i].Y.Mul(zInv2.Mul(&zInv))
		ps[i].Z.SetInt(1)
		ps[i].X.Normalize()
		ps[i].Y.Normalize()
	}
}

// address is the address of index whose public key is pub.
func (d *hdDeriver) address(index uint32, pub *btcec.PublicKey) (Address, error) {
	var err error
	a := Address{Network: d.network, Index: int64(index)}
	switch d.network {
	case payment.Bitcoin, payment.Litecoin:
		h := btcutil.Hash160(pub.SerializeCompressed())
		a.Key = append([]byte{0x00, 0x14}, h...)
		a.String, err = encodeSegwit(d.hrp, 0, h)
		if err != nil {
			return Address{}, fmt.Errorf("derive index %d: %w", index, err)
		}
	case payment.Ethereum:
		acc := ethAccount(pub)
		a.Key = acc
		a.String = common.BytesToAddress(acc).Hex()
	case payment.Tron:
		acc := ethAccount(pub)
		a.Key = acc
		a.String = TronAddress(acc)
	}
	return a, nil
}

// child is BIP32 CKDpub of the external key for a non-hardened index:
// I = HMAC-SHA512(chain code, serP(K) ‖ ser32(i)), child = parse256(IL)·G + K,
// into p, in Jacobian form. An IL at or above the group order, or a zero
// IL or an infinite child, is hdkeychain.ErrInvalidChild (probability below
// 2^-127): skip the index.
func (d *hdDeriver) child(index uint32, p *btcec.JacobianPoint) error {
	var data [37]byte
	copy(data[:33], d.pubKey[:])
	binary.BigEndian.PutUint32(data[33:], index)
	mac := hmac.New(sha512.New, d.chainCode[:])
	mac.Write(data[:])
	var sum [64]byte
	il := mac.Sum(sum[:0])[:32]
	var scalar btcec.ModNScalar
	if overflow := scalar.SetByteSlice(il); overflow || scalar.IsZero() {
		return hdkeychain.ErrInvalidChild
	}
	btcec.ScalarBaseMultNonConst(&scalar, p)
	btcec.AddNonConst(p, &d.point, p)
	if (p.X.IsZero() && p.Y.IsZero()) || p.Z.IsZero() {
		return hdkeychain.ErrInvalidChild
	}
	return nil
}

// ethAccount is keccak256(uncompressed public key without 0x04)[12:].
// The hash comes from go-ethereum's keccak package alone (the one its
// crypto.Keccak256 uses): importing go-ethereum/crypto would link its cgo
// secp256k1, whose C symbols clash with ltcd's.
func ethAccount(pub *btcec.PublicKey) []byte {
	h := keccak.NewLegacyKeccak256()
	h.Write(pub.SerializeUncompressed()[1:])
	return h.Sum(nil)[12:]
}
