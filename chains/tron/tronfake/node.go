package tronfake

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"sync"

	"github.com/paywatch/paywatch/clock"
)

// DefaultSolidifiedLag is how far the solidified block trails the head on
// mainnet: 19 distinct super representatives must build on a block.
const DefaultSolidifiedLag = 19

// blockVersion is the block_header.raw_data.version of current mainnet blocks.
const blockVersion = 30

// genesisTime is the timestamp (ms) of the fake's block 0.
const genesisTime int64 = 1_700_000_000_000

// Failure is a failure the node injects into its next answer.
type Failure string

// The failures FailNext can inject, each as a real node or TronGrid shows it.
const (
	// FailErrorBody is HTTP 200 with a java-tron exception in an Error body.
	FailErrorBody Failure = "error_body"
	// FailBusy is HTTP 200 with the node's rate limiter Error body
	// ("lack of computing resources").
	FailBusy Failure = "busy"
	// FailLite is a lite full node's plain-text refusal (HTTP 200, not JSON).
	FailLite Failure = "lite"
	// Fail429 is TronGrid's HTTP 429 throttle.
	Fail429 Failure = "429"
	// Fail500 is an HTTP 500 error page from Jetty.
	Fail500 Failure = "500"
	// FailGarbage is HTTP 200 with a truncated JSON body.
	FailGarbage Failure = "garbage"
	// FailTimeout holds the request until the client gives up.
	FailTimeout Failure = "timeout"
)

var failures = map[Failure]bool{
	FailErrorBody: true, FailBusy: true, FailLite: true, Fail429: true,
	Fail500: true, FailGarbage: true, FailTimeout: true,
}

// ErrBelowSolidified is returned by Reorg for a depth that would replace the
// solidified block or one below it, which the Tron protocol never does.
var ErrBelowSolidified = errors.New("tronfake: reorg at or below the solidified block")

// Node is an in-memory Tron chain served over java-tron's HTTP API. It is
// safe for concurrent use.
type Node struct {
	mu      sync.Mutex
	blocks  map[uint64]*block
	heights []uint64 // sorted heights present in blocks
	lag     uint64
	pending []*pendingTx
	fails   []Failure
	apiKey  string
	forks   int
	seq     int64
	keys    map[string]int
	hooks   map[string][]func() // path -> run once before its next call (OnNext)
	w       *walletState        // accounts and tokens (wallet.go), nil until used
	// clock, when set (NewOn), stamps each mined block with its time; nil
	// keeps the chain's own time, 3 s a block from genesisTime.
	clock clock.Clock

	// noInternalTx: java-tron's vm.saveInternalTx = false (SetSaveInternalTx).
	noInternalTx bool
}

// block is one block, already rendered as the node prints it.
type block struct {
	number    uint64
	id        string
	timestamp int64
	json      []byte            // getblockbynum body
	infos     []byte            // gettransactioninfobyblocknum body (a JSON array)
	txs       map[string][]byte // txID -> the transaction as printed in the block
	infoByID  map[string][]byte // txID -> its TransactionInfo
	src       []*pendingTx      // the transactions it was built from, for ReorgReplay
}

// pendingTx is a transaction waiting for the next mined block.
type pendingTx struct {
	id   string
	tx   map[string]any // as printed inside "transactions"
	info map[string]any // TransactionInfo without blockNumber/blockTimeStamp
}

// New returns a node holding only a genesis block, with the solidified block
// DefaultSolidifiedLag blocks behind the head.
func New() *Node {
	n := &Node{blocks: map[uint64]*block{}, lag: DefaultSolidifiedLag, keys: map[string]int{}}
	n.put(n.build(0, make([]byte, 32), genesisTime, nil))
	return n
}

// NewOn returns a node like New whose blocks carry c's time, as a live
// chain's do: genesis is stamped c.Now() and each mined block c.Now(), or
// 1 ms after its parent when the clock has not moved past it (Mine(k)
// mines k blocks at once). The sandbox gives it the wall clock, so a
// payment's block time, and with it lateness and the networks' lag, are
// those of the day.
func NewOn(c clock.Clock) *Node {
	n := &Node{blocks: map[uint64]*block{}, lag: DefaultSolidifiedLag, keys: map[string]int{}, clock: c}
	n.put(n.build(0, make([]byte, 32), c.Now().UnixMilli(), nil))
	return n
}

// nextTimestampLocked is the time (ms) of a block mined on tip now.
func (n *Node) nextTimestampLocked(tip *block) int64 {
	if n.clock == nil {
		return tip.timestamp + 3000
	}
	return max(n.clock.Now().UnixMilli(), tip.timestamp+1)
}

// SetSaveInternalTx is java-tron's vm.saveInternalTx. The node writes a
// transaction's internal_transactions into its TransactionInfo only while it
// is true, when it processes the transaction: java-tron's shipped
// config.conf has it false, so such a node answers a contract call that sent
// TRX without them (and keeps answering so for the transactions it processed
// meanwhile, after the setting changes). The fake starts with it true, so
// that tests of internal transfers see them; SetSaveInternalTx(false) makes
// it a node as java-tron ships.
func (n *Node) SetSaveInternalTx(on bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.noInternalTx = !on
}

// SetGenesisID gives the node's block 0 the id genesis (64 hex digits), so
// that it presents itself as that network (tron.MainnetGenesis,
// tron.NileGenesis, …). It must come before any block is mined on top.
func (n *Node) SetGenesisID(genesis string) error {
	if _, err := hex.DecodeString(genesis); err != nil || len(genesis) != 64 {
		return fmt.Errorf("tronfake: genesis id %q is not 64 hex digits", genesis)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.tipLocked() != 0 {
		return errors.New("tronfake: SetGenesisID after blocks were mined")
	}
	b := n.blocks[0]
	b.json = bytes.Replace(b.json, []byte(`"blockID":"`+b.id+`"`), []byte(`"blockID":"`+genesis+`"`), 1)
	b.id = genesis
	return nil
}

// AddCaptured stores a real block exactly as captured (a getblockbynum
// body) together with its gettransactioninfobyblocknum body (nil for none),
// replacing any block at that height. Both are served byte for byte; blocks
// mined later build on it.
func (n *Node) AddCaptured(blockJSON, txInfoJSON []byte) error {
	var b struct {
		BlockID string `json:"blockID"`
		Header  struct {
			Raw struct {
				Number    uint64 `json:"number"`
				Timestamp int64  `json:"timestamp"`
			} `json:"raw_data"`
		} `json:"block_header"`
		Transactions []json.RawMessage `json:"transactions"`
	}
	if err := json.Unmarshal(blockJSON, &b); err != nil {
		return fmt.Errorf("tronfake: captured block: %w", err)
	}
	if len(b.BlockID) != 64 {
		return fmt.Errorf("tronfake: captured block has blockID %q", b.BlockID)
	}
	blk := &block{number: b.Header.Raw.Number, id: b.BlockID, timestamp: b.Header.Raw.Timestamp,
		json: blockJSON, infos: []byte("[]"), txs: map[string][]byte{}, infoByID: map[string][]byte{}}
	var id struct {
		TxID string `json:"txID"`
		ID   string `json:"id"`
	}
	for _, t := range b.Transactions {
		if err := json.Unmarshal(t, &id); err != nil {
			return fmt.Errorf("tronfake: captured block %d: %w", blk.number, err)
		}
		blk.txs[id.TxID] = t
	}
	if txInfoJSON != nil {
		var infos []json.RawMessage
		if err := json.Unmarshal(txInfoJSON, &infos); err != nil {
			return fmt.Errorf("tronfake: captured infos of block %d: %w", blk.number, err)
		}
		n.mu.Lock()
		strip := n.noInternalTx
		n.mu.Unlock()
		if strip {
			// Processed with vm.saveInternalTx = false: no
			// internal_transactions in what the node keeps.
			var err error
			if infos, txInfoJSON, err = withoutInternalTx(infos); err != nil {
				return fmt.Errorf("tronfake: captured infos of block %d: %w", blk.number, err)
			}
		}
		for _, info := range infos {
			if err := json.Unmarshal(info, &id); err != nil {
				return fmt.Errorf("tronfake: captured infos of block %d: %w", blk.number, err)
			}
			blk.infoByID[id.ID] = info
		}
		blk.infos = txInfoJSON
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.put(blk)
	return nil
}

// withoutInternalTx returns infos without their internal_transactions, and
// the list as JSON.
func withoutInternalTx(infos []json.RawMessage) ([]json.RawMessage, []byte, error) {
	out := make([]json.RawMessage, len(infos))
	for i, info := range infos {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(info, &m); err != nil {
			return nil, nil, err
		}
		delete(m, "internal_transactions")
		b, err := json.Marshal(m)
		if err != nil {
			return nil, nil, err
		}
		out[i] = b
	}
	all, err := json.Marshal(out)
	return out, all, err
}

// Mine appends k blocks; the first carries every pending payment. A block
// without transactions has no "transactions" key, as on the real node.
func (n *Node) Mine(k int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for range k {
		n.mineLocked()
	}
}

func (n *Node) mineLocked() {
	tip := n.blocks[n.tipLocked()]
	id, _ := hex.DecodeString(tip.id)
	b := n.build(tip.number+1, id, n.nextTimestampLocked(tip), n.pending)
	n.pending = nil
	n.put(b)
}

// PayTRX queues a TransferContract of sun from from to to (20-byte accounts,
// or 21 bytes with the 41 prefix) for the next mined block and returns its
// txID, which is sha256 of the protobuf raw_data as on the real chain. When
// success is false the transaction carries contractRet TRANSFER_FAILED.
func (n *Node) PayTRX(from, to []byte, sun int64, success bool) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	owner, dest := wire(from), wire(to)
	raw := n.rawLocked(ctTransfer, "type.googleapis.com/protocol.TransferContract",
		transferContract(owner, dest, sun), 0)
	value := map[string]any{
		"amount":        sun,
		"owner_address": hex.EncodeToString(owner),
		"to_address":    hex.EncodeToString(dest),
	}
	ret := "SUCCESS"
	if !success {
		ret = "TRANSFER_FAILED"
	}
	p := n.txLocked(raw, "TransferContract", value, ret)
	p.info = map[string]any{
		"contractResult": []string{""},
		"id":             p.id,
		"receipt":        map[string]any{"net_usage": 267},
	}
	n.pending = append(n.pending, p)
	return p.id
}

// PayTRC20 queues a TriggerSmartContract calling transfer(to, amount) on
// contract and its TransactionInfo with the Transfer log, and returns the
// txID. When success is false the transaction is REVERT, the info says
// result FAILED with receipt.result REVERT, and the Transfer log is still
// present, so a client must check the result rather than rely on the log
// being absent.
func (n *Node) PayTRC20(contract, from, to []byte, amount *big.Int, success bool) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	c, owner, dest := wire(contract), wire(from), wire(to)
	word := func(b []byte) []byte { return append(make([]byte, 32-len(b)), b...) }
	amt := amount.Bytes()
	data := append([]byte{0xa9, 0x05, 0x9c, 0xbb}, word(dest[1:])...)
	data = append(data, word(amt)...)
	raw := n.rawLocked(ctTrigger, "type.googleapis.com/protocol.TriggerSmartContract",
		triggerContract(owner, c, data), 100_000_000)
	value := map[string]any{
		"contract_address": hex.EncodeToString(c),
		"data":             hex.EncodeToString(data),
		"owner_address":    hex.EncodeToString(owner),
	}
	ret := "SUCCESS"
	if !success {
		ret = "REVERT"
	}
	p := n.txLocked(raw, "TriggerSmartContract", value, ret)
	p.tx["raw_data"].(map[string]any)["fee_limit"] = raw.feeLimit
	receipt := map[string]any{
		"energy_usage_total": 14631,
		"net_usage":          345,
		"result":             ret,
	}
	p.info = map[string]any{
		"contractResult":   []string{hex.EncodeToString(word([]byte{1}))},
		"contract_address": hex.EncodeToString(c),
		"id":               p.id,
		"log": []map[string]any{{
			"address": hex.EncodeToString(c[1:]),
			"data":    hex.EncodeToString(word(amt)),
			"topics": []string{
				"ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
				hex.EncodeToString(word(owner[1:])),
				hex.EncodeToString(word(dest[1:])),
			},
		}},
		"receipt": receipt,
	}
	if !success {
		p.info["contractResult"] = []string{""}
		p.info["result"] = "FAILED"
		p.info["resMessage"] = hex.EncodeToString([]byte("REVERT opcode executed"))
	}
	n.pending = append(n.pending, p)
	return p.id
}

// Reorg replaces the depth highest blocks by as many new empty blocks with
// other hashes; the payments they held are gone (not re-queued). It refuses
// to replace the solidified block or anything below it.
func (n *Node) Reorg(depth int) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	tip := n.tipLocked()
	if depth <= 0 || uint64(depth) > tip {
		return fmt.Errorf("tronfake: reorg depth %d at head %d", depth, tip)
	}
	first := tip - uint64(depth) + 1
	if solid := n.solidLocked(); first <= solid {
		return fmt.Errorf("%w: replacing from %d, solidified %d", ErrBelowSolidified, first, solid)
	}
	n.forks++
	old := make(map[uint64]string, depth)
	for h := first; h <= tip; h++ {
		old[h] = n.blocks[h].id
		n.remove(h)
	}
	pending := n.pending
	n.pending = nil
	for h := first; h <= tip; h++ {
		n.mineLocked()
		for n.blocks[h].id == old[h] { // a different producer, a different hash
			n.forks++
			n.remove(h)
			n.mineLocked()
		}
	}
	n.pending = pending
	return nil
}

// ReorgReplay replaces the depth highest blocks by blocks of another
// producer one slot later (other ids and timestamps) that hold the same
// transactions again, as a real fork re-mines the mempool; a transaction
// whose txID is in failed ran out of energy on the new fork (result FAILED,
// receipt OUT_OF_ENERGY, no logs). Only the PayTRX/PayTRC20/CallContract
// shortcuts are replayed; a wallet transaction is not re-applied. It refuses
// to replace the solidified block or anything below it.
func (n *Node) ReorgReplay(depth int, failed ...string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	tip := n.tipLocked()
	if depth <= 0 || uint64(depth) > tip {
		return fmt.Errorf("tronfake: reorg depth %d at head %d", depth, tip)
	}
	first := tip - uint64(depth) + 1
	if solid := n.solidLocked(); first <= solid {
		return fmt.Errorf("%w: replacing from %d, solidified %d", ErrBelowSolidified, first, solid)
	}
	fail := make(map[string]bool, len(failed))
	for _, id := range failed {
		fail[id] = true
	}
	n.forks++
	old := make([]*block, 0, depth)
	for h := first; h <= tip; h++ {
		old = append(old, n.blocks[h])
		n.remove(h)
	}
	for _, ob := range old {
		txs := make([]*pendingTx, 0, len(ob.src))
		for _, t := range ob.src {
			if fail[t.id] {
				info := make(map[string]any, len(t.info))
				for k, v := range t.info {
					info[k] = v
				}
				delete(info, "log")
				delete(info, "internal_transactions")
				info["result"] = "FAILED"
				info["receipt"] = map[string]any{"energy_usage_total": 14631, "result": "OUT_OF_ENERGY"}
				t = &pendingTx{id: t.id, tx: t.tx, info: info}
			}
			txs = append(txs, t)
		}
		parent := n.blocks[n.tipLocked()]
		pid, _ := hex.DecodeString(parent.id)
		n.put(n.build(ob.number, pid, ob.timestamp+3000, txs))
	}
	return nil
}

// OnNext runs f once, just before the node answers the next call of path
// (for example "/wallet/gettransactioninfobyblocknum"): a test switches forks
// between two calls a client makes, as a load-balanced node does. Hooks of a
// path queue.
func (n *Node) OnNext(path string, f func()) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.hooks == nil {
		n.hooks = map[string][]func(){}
	}
	n.hooks[path] = append(n.hooks[path], f)
}

// SetSolidifiedLag sets how many blocks the solidified block trails the head.
func (n *Node) SetSolidifiedLag(k int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.lag = uint64(max(k, 0))
}

// FailNext makes the next API call that reaches a known endpoint fail with
// kind; calls queue. An unknown kind is a bug in the test and panics.
func (n *Node) FailNext(kind Failure) {
	if !failures[kind] {
		panic(fmt.Sprintf("tronfake: unknown failure %q", kind))
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.fails = append(n.fails, kind)
}

// RequireAPIKey makes the node answer HTTP 401 {"Error":"ApiKey not exists"},
// as TronGrid does, to every call whose TRON-PRO-API-KEY header is not key.
func (n *Node) RequireAPIKey(key string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.apiKey = key
}

// APIKeys returns how many calls carried each TRON-PRO-API-KEY value ("" for
// none).
func (n *Node) APIKeys() map[string]int {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make(map[string]int, len(n.keys))
	for k, v := range n.keys {
		out[k] = v
	}
	return out
}

// Tip returns the head block number.
func (n *Node) Tip() uint64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.tipLocked()
}

// BlockID returns the blockID at height, or "" when there is none.
func (n *Node) BlockID(height uint64) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if b := n.blocks[height]; b != nil {
		return b.id
	}
	return ""
}

// Solidified returns the solidified block number.
func (n *Node) Solidified() uint64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.solidLocked()
}

func (n *Node) tipLocked() uint64 { return n.heights[len(n.heights)-1] }

// solidLocked is the highest block at or below head - lag.
func (n *Node) solidLocked() uint64 {
	tip := n.tipLocked()
	want := uint64(0)
	if tip > n.lag {
		want = tip - n.lag
	}
	i := sort.Search(len(n.heights), func(i int) bool { return n.heights[i] > want })
	return n.heights[max(i-1, 0)]
}

func (n *Node) put(b *block) {
	if _, ok := n.blocks[b.number]; !ok {
		i := sort.Search(len(n.heights), func(i int) bool { return n.heights[i] >= b.number })
		n.heights = append(n.heights, 0)
		copy(n.heights[i+1:], n.heights[i:])
		n.heights[i] = b.number
	}
	n.blocks[b.number] = b
}

func (n *Node) remove(h uint64) {
	n.undoWalletLocked(n.blocks[h])
	delete(n.blocks, h)
	i := sort.Search(len(n.heights), func(i int) bool { return n.heights[i] >= h })
	if i < len(n.heights) && n.heights[i] == h {
		n.heights = append(n.heights[:i], n.heights[i+1:]...)
	}
}

// wire returns the 21-byte 41-prefixed form of a 20- or 21-byte account.
func wire(a []byte) []byte {
	if len(a) == 21 && a[0] == 0x41 {
		return append([]byte(nil), a...)
	}
	return append([]byte{0x41}, a...)
}

// rawLocked fills raw_data referencing the head block. Each transaction
// gets its own timestamp, so equal payments still have distinct txIDs.
func (n *Node) rawLocked(ctype int, typeURL string, value []byte, feeLimit int64) *txRaw {
	tip := n.blocks[n.tipLocked()]
	id, _ := hex.DecodeString(tip.id)
	n.seq++
	return &txRaw{
		refBlockBytes: id[6:8],
		refBlockHash:  id[8:16],
		expiration:    tip.timestamp + 60_000,
		contractType:  ctype,
		typeURL:       typeURL,
		value:         value,
		timestamp:     tip.timestamp + n.seq,
		feeLimit:      feeLimit,
	}
}

// txLocked renders a transaction the way Util.printTransactionToJSON does.
func (n *Node) txLocked(raw *txRaw, ctype string, value map[string]any, ret string) *pendingTx {
	rawBytes := raw.marshal()
	sum := sha256.Sum256(rawBytes)
	id := hex.EncodeToString(sum[:])
	sig := sha256.Sum256(append([]byte("sig"), sum[:]...))
	sig2 := sha256.Sum256(sig[:])
	tx := map[string]any{
		"raw_data": map[string]any{
			"contract": []map[string]any{{
				"parameter": map[string]any{"type_url": raw.typeURL, "value": value},
				"type":      ctype,
			}},
			"expiration":      raw.expiration,
			"ref_block_bytes": hex.EncodeToString(raw.refBlockBytes),
			"ref_block_hash":  hex.EncodeToString(raw.refBlockHash),
			"timestamp":       raw.timestamp,
		},
		"raw_data_hex": hex.EncodeToString(rawBytes),
		"ret":          []map[string]any{{"contractRet": ret}},
		"signature":    []string{hex.EncodeToString(append(append(sig[:], sig2[:]...), 0))},
		"txID":         id,
	}
	return &pendingTx{id: id, tx: tx}
}

// witnesses are the producers the fake rotates through (21-byte hex).
var witnesses = func() [][]byte {
	out := make([][]byte, 27)
	for i := range out {
		s := sha256.Sum256([]byte{'w', byte(i)})
		out[i] = append([]byte{0x41}, s[:20]...)
	}
	return out
}()

// build renders block number on parent with txs.
func (n *Node) build(number uint64, parent []byte, ts int64, txs []*pendingTx) *block {
	root := make([]byte, 32) // an empty block's txTrieRoot is all zeros
	if len(txs) > 0 {
		h := sha256.New()
		for _, t := range txs {
			h.Write([]byte(t.id))
		}
		root = h.Sum(nil)
	}
	witness := witnesses[(int(number%27)+n.forks)%27]
	hdr := headerRaw{timestamp: ts, txTrieRoot: root, parentHash: parent, number: int64(number),
		witness: witness, version: blockVersion}
	id := hex.EncodeToString(hdr.blockID())
	rawData := map[string]any{
		"parentHash":      hex.EncodeToString(parent),
		"timestamp":       ts,
		"txTrieRoot":      hex.EncodeToString(root),
		"version":         blockVersion,
		"witness_address": hex.EncodeToString(witness),
	}
	if number != 0 { // proto3 JSON omits zero values
		rawData["number"] = number
	}
	wsig := sha256.Sum256([]byte(id))
	body := map[string]any{
		"blockID": id,
		"block_header": map[string]any{
			"raw_data":          rawData,
			"witness_signature": hex.EncodeToString(append(append(wsig[:], wsig[:]...), 1)),
		},
	}
	b := &block{number: number, id: id, timestamp: ts, txs: map[string][]byte{}, infoByID: map[string][]byte{}, src: txs}
	infos := make([]map[string]any, 0, len(txs))
	if len(txs) > 0 {
		list := make([]map[string]any, 0, len(txs))
		for _, t := range txs {
			list = append(list, t.tx)
			info := make(map[string]any, len(t.info)+2)
			for k, v := range t.info {
				info[k] = v
			}
			info["blockNumber"] = number
			info["blockTimeStamp"] = ts
			infos = append(infos, info)
			b.txs[t.id] = mustJSON(t.tx)
			b.infoByID[t.id] = mustJSON(info)
		}
		body["transactions"] = list
	}
	b.json = mustJSON(body)
	b.infos = mustJSON(infos)
	return b
}

func mustJSON(v any) []byte {
	out, err := json.Marshal(v)
	if err != nil {
		panic(err) // only maps, strings and numbers: cannot fail
	}
	return out
}
