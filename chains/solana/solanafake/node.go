package solanafake

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"github.com/mr-tron/base58"

	"github.com/paywatch/paywatch/clock"
)

// Failure modes for FailNext besides agave's JSON-RPC error codes (-32004,
// -32007, -32009, -32014, -32019).
const (
	// FailHTTP429 answers HTTP 429 with a provider-style JSON-RPC body.
	FailHTTP429 = 429
	// FailHTTP500 answers HTTP 500 with a plain-text body.
	FailHTTP500 = 500
	// FailGarbage answers HTTP 200 with a body that is not JSON.
	FailGarbage = 1
	// FailHang never answers; the request ends when the client gives up.
	FailHang = 2
)

// Fee is the fee the fake charges per transaction (5000 lamports: one
// signature at the base rate).
const Fee = 5000

// startBalance is credited to a payer the fake has never seen (the fake has
// no airdrop; a payer is funded on first use).
const startBalance = 1_000_000_000_000

// SystemProgram is the System program id.
const SystemProgram = "11111111111111111111111111111111"

// sigRef locates a transaction for getSignaturesForAddress.
type sigRef struct {
	slot uint64
	pos  int
	tx   *ftx
}

// Node is an in-memory Solana cluster behind agave's JSON-RPC interface.
// Every produced slot is immediately finalized (confirmed == finalized ==
// tip). It is safe for concurrent use.
type Node struct {
	mu       sync.Mutex
	tip      uint64
	blocks   map[uint64]*block
	last     *block // newest block (parent of the next one)
	pending  []*pending
	txs      map[string]*ftx
	byAddr   map[string][]sigRef
	balances map[string]uint64
	fails    []int
	seq      uint64 // makes hashes and signatures unique
	// lost are produced slots getBlock answers with a skip code (a node
	// after a ledger jump, a gap in long-term storage) while getBlocks
	// still lists them.
	lost map[uint64]int
	// ws are the open websocket connections (ws.go); nextSub numbers
	// their subscriptions from 0, like agave.
	ws      map[*wsConn]bool
	nextSub uint64
	// accounts holds owners and data (accounts.go); prior what wallet
	// transactions changed, for Reorg (signed.go); sigSubs the
	// signatureSubscribe subscriptions.
	accounts map[string]*accountData
	prior    map[string]map[string]priorState
	sigSubs  map[uint64]*sigSub
	// genesis is what getGenesisHash answers: slot 0's blockhash unless
	// SetGenesisHash names a cluster.
	genesis string
	// clock, when set (NewOn), gives each new block its blockTime; nil
	// keeps the cluster's own time, 0.4 s a slot from 1_700_000_000.
	clock clock.Clock
}

// pending is a payment waiting for the next mined block.
type pending struct {
	from, to string
	lamports uint64
	failed   bool
	v0       bool
	sig      string
	signed   *wireTx // a wallet's transaction (sendTransaction), run when mined
}

// New returns a node whose only block is slot 0.
func New() *Node { return newNode(nil) }

// NewOn returns a node like New whose blocks carry c's time (whole
// seconds, never before the parent's), as a live cluster's do: slot 0 is
// stamped c.Now(). The sandbox gives it the wall clock, so a payment's
// blockTime, and with it lateness and the networks' lag, are those of the
// day.
func NewOn(c clock.Clock) *Node { return newNode(c) }

func newNode(c clock.Clock) *Node {
	n := &Node{
		clock:    c,
		blocks:   map[uint64]*block{},
		txs:      map[string]*ftx{},
		byAddr:   map[string][]sigRef{},
		balances: map[string]uint64{},
	}
	genesis := &block{slot: 0, hash: n.hash("genesis"), rewards: json.RawMessage("[]")}
	genesis.prevHash = genesis.hash
	t := int64(1_700_000_000)
	if c != nil {
		t = c.Now().Unix()
	}
	genesis.time = &t
	n.blocks[0] = genesis
	n.last = genesis
	n.genesis = genesis.hash
	return n
}

// SetGenesisHash makes getGenesisHash answer hash: the node then presents
// itself as that cluster (solana.MainnetGenesis, solana.DevnetGenesis, …).
func (n *Node) SetGenesisHash(hash string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.genesis = hash
}

// hash derives a fresh 32-byte base58 value.
func (n *Node) hash(label string) string {
	n.seq++
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], n.seq)
	h := sha256.Sum256(append([]byte("solanafake "+label), b[:]...))
	return base58.Encode(h[:])
}

// signature derives a fresh 64-byte base58 signature.
func (n *Node) signature() string {
	n.seq++
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], n.seq)
	h1 := sha256.Sum256(append([]byte("solanafake sig a"), b[:]...))
	h2 := sha256.Sum256(append([]byte("solanafake sig b"), b[:]...))
	return base58.Encode(append(h1[:], h2[:]...))
}

// Tip returns the newest slot (produced or skipped).
func (n *Node) Tip() uint64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.tip
}

// Balance returns the fake's balance of a 32-byte account in lamports.
func (n *Node) Balance(key [32]byte) uint64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.balances[base58.Encode(key[:])]
}

// Mine produces k new slots with a block each; the first one includes every
// pending payment in PaySOL order.
func (n *Node) Mine(k int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for range k {
		n.tip++
		b := n.newBlock(n.tip)
		for _, p := range n.pending {
			n.includePendingLocked(b, p)
		}
		n.pending = nil
		n.notifySignaturesLocked()
	}
}

// Skip makes the next k slots skipped: getBlock answers -32007 and getBlocks
// leaves them out.
func (n *Node) Skip(k int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.tip += uint64(k)
}

// Lose makes getBlock of the produced slot answer code, -32007 ("skipped,
// or missing due to ledger jump to recent snapshot") or -32009 ("missing in
// long-term storage"), while getBlocks keeps listing it: the faulty node a
// client must not take for a skip. Restore undoes it.
func (n *Node) Lose(slot uint64, code int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.lost == nil {
		n.lost = map[uint64]int{}
	}
	n.lost[slot] = code
}

// Restore makes a slot given to Lose readable again.
func (n *Node) Restore(slot uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.lost, slot)
}

// newBlock appends an empty block at slot on top of the newest block.
func (n *Node) newBlock(slot uint64) *block {
	parent := n.last
	// 400 ms slots: whole seconds elapsed between the parent's slot and this one.
	t := int64(1_700_000_000) + int64(slot)*4/10
	if parent.time != nil {
		t = *parent.time + int64(slot)*4/10 - int64(parent.slot)*4/10
	}
	if n.clock != nil {
		t = n.clock.Now().Unix()
		if parent.time != nil {
			t = max(t, *parent.time)
		}
	}
	b := &block{
		slot:       slot,
		parentSlot: parent.slot,
		height:     parent.height + 1,
		hash:       n.hash("block"),
		prevHash:   parent.hash,
		time:       &t,
		rewards:    json.RawMessage("[]"),
	}
	n.blocks[slot] = b
	n.last = b
	n.notifySlot(parent.slot, slot)
	return b
}

// include appends t to b and indexes it.
func (n *Node) include(b *block, t *ftx) {
	t.slot, t.blockTime = b.slot, b.time
	b.txs = append(b.txs, t)
	n.txs[t.signatures[0]] = t
	seen := map[string]bool{}
	for _, k := range t.allKeys() {
		if !seen[k] {
			seen[k] = true
			n.byAddr[k] = append(n.byAddr[k], sigRef{slot: b.slot, pos: len(b.txs) - 1, tx: t})
		}
	}
}

// PaySOL queues a System program Transfer of lamports from → to for the
// next mined block and returns its signature. The payer pays Fee; a failed
// transfer (failed) pays only the fee and carries meta.err
// {"InstructionError":[0,{"Custom":1}]} like a transfer with insufficient
// lamports. With v0 the recipient is not in the static keys but loaded
// through an address lookup table (meta.loadedAddresses.writable), so its
// balance index follows the static keys.
func (n *Node) PaySOL(from, to [32]byte, lamports uint64, failed bool, v0 bool) (signature string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	p := &pending{from: base58.Encode(from[:]), to: base58.Encode(to[:]), lamports: lamports, failed: failed, v0: v0, sig: n.signature()}
	n.pending = append(n.pending, p)
	return p.sig
}

// transfer executes p against the balances and returns the transaction as
// agave would store it.
func (n *Node) transfer(p *pending, b *block) *ftx {
	if _, ok := n.balances[p.from]; !ok {
		n.balances[p.from] = startBalance
	}
	if _, ok := n.balances[SystemProgram]; !ok {
		n.balances[SystemProgram] = 1
	}
	data := make([]byte, 12)
	binary.LittleEndian.PutUint32(data, 2)
	binary.LittleEndian.PutUint64(data[4:], p.lamports)
	t := &ftx{
		version:    -1,
		signatures: []string{p.sig},
		header:     header{NumRequiredSignatures: 1, NumReadonlyUnsignedAccounts: 1},
		blockhash:  n.last.hash,
		failed:     p.failed,
	}
	if p.v0 {
		t.version = 0
		t.keys = []string{p.from, SystemProgram}
		t.loadedW = []string{p.to}
		t.loadedR = []string{}
		t.lookups = []lookup{{AccountKey: n.hash("lookup table"), WritableIndexes: []int{0}, ReadonlyIndexes: []int{}}}
		t.instrs = []instruction{{ProgramIDIndex: 1, Accounts: []int{0, 2}, Data: base58.Encode(data)}}
	} else {
		t.keys = []string{p.from, p.to, SystemProgram}
		t.loadedW, t.loadedR = []string{}, []string{}
		t.instrs = []instruction{{ProgramIDIndex: 2, Accounts: []int{0, 1}, Data: base58.Encode(data)}}
	}
	keys := t.allKeys()
	pre := make([]uint64, len(keys))
	for i, k := range keys {
		pre[i] = n.balances[k]
	}
	logs := []string{"Program " + SystemProgram + " invoke [1]"}
	n.balances[p.from] -= Fee
	var errJSON, status string
	if p.failed {
		logs = append(logs,
			fmt.Sprintf("Transfer: insufficient lamports %d, need %d", n.balances[p.from], p.lamports),
			"Program "+SystemProgram+" failed: custom program error: 0x1")
		errJSON = `{"InstructionError":[0,{"Custom":1}]}`
		status = `{"Err":` + errJSON + `}`
	} else {
		n.balances[p.from] -= p.lamports
		n.balances[p.to] += p.lamports
		logs = append(logs, "Program "+SystemProgram+" success")
		errJSON, status = "null", `{"Ok":null}`
	}
	post := make([]uint64, len(keys))
	for i, k := range keys {
		post[i] = n.balances[k]
	}
	t.meta = map[string]json.RawMessage{
		"computeUnitsConsumed": raw(150),
		"err":                  json.RawMessage(errJSON),
		"fee":                  raw(Fee),
		"innerInstructions":    raw([]any{}),
		"loadedAddresses":      raw(map[string][]string{"readonly": t.loadedR, "writable": t.loadedW}),
		"logMessages":          raw(logs),
		"postBalances":         raw(post),
		"postTokenBalances":    raw([]any{}),
		"preBalances":          raw(pre),
		"preTokenBalances":     raw([]any{}),
		"rewards":              raw([]any{}),
		"status":               json.RawMessage(status),
	}
	return t
}

func raw(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain values are marshalled here
	}
	return b
}

// FailNext makes the next HTTP request fail with code: an agave JSON-RPC
// error code (-32004, -32007, -32009, -32014, -32019, with agave's message)
// or one of FailHTTP429, FailHTTP500, FailGarbage, FailHang. Calls queue.
func (n *Node) FailNext(code int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.fails = append(n.fails, code)
}

// Reorg replaces the newest depth blocks by as many empty blocks with new
// hashes, dropping their transactions and undoing their balance changes.
// A real cluster never reverts finalized slots; this exists for the
// chainstest conformance suite (and models what a reader below finalized
// would see).
func (n *Node) Reorg(depth int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var dropped []*block
	for range depth {
		b := n.last
		if b.slot == 0 {
			break
		}
		dropped = append(dropped, b)
		delete(n.blocks, b.slot)
		n.last = n.blocks[b.parentSlot]
		for i := len(b.txs) - 1; i >= 0; i-- {
			n.forget(b.txs[i])
		}
	}
	for i := len(dropped) - 1; i >= 0; i-- {
		n.newBlock(dropped[i].slot)
	}
}

// forget removes t from the indexes and restores its pre-balances (and
// the account data a wallet transaction changed).
func (n *Node) forget(t *ftx) {
	n.restoreLocked(t)
	delete(n.txs, t.signatures[0])
	for _, k := range t.allKeys() {
		refs := n.byAddr[k]
		kept := refs[:0]
		for _, r := range refs {
			if r.tx != t {
				kept = append(kept, r)
			}
		}
		n.byAddr[k] = kept
	}
	var pre []uint64
	if json.Unmarshal(t.meta["preBalances"], &pre) == nil {
		for i, k := range t.allKeys() {
			if i < len(pre) {
				n.balances[k] = pre[i]
			}
		}
	}
}

// AddCapturedBlock stores a real getBlock result (encoding "json" or
// "base64", transactionDetails "full", as captured) at slot, which becomes
// the tip if it is newer; slots between the previous tip and it have no block
// (skipped). The block keeps its captured hashes. It panics if the JSON is
// not a getBlock result: captures are fixed test data.
func (n *Node) AddCapturedBlock(slot uint64, getBlockResultJSON []byte) {
	var c struct {
		BlockHeight       *uint64         `json:"blockHeight"`
		BlockTime         *int64          `json:"blockTime"`
		Blockhash         string          `json:"blockhash"`
		ParentSlot        uint64          `json:"parentSlot"`
		PreviousBlockhash string          `json:"previousBlockhash"`
		Rewards           json.RawMessage `json:"rewards"`
		Transactions      []capturedTx    `json:"transactions"`
	}
	if err := json.Unmarshal(getBlockResultJSON, &c); err != nil || c.Blockhash == "" {
		panic(fmt.Sprintf("solanafake: AddCapturedBlock(%d): not a getBlock result: %v", slot, err))
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	b := &block{slot: slot, parentSlot: c.ParentSlot, hash: c.Blockhash, prevHash: c.PreviousBlockhash, time: c.BlockTime, rewards: c.Rewards}
	if c.BlockHeight != nil {
		b.height = *c.BlockHeight
	}
	if b.rewards == nil {
		b.rewards = json.RawMessage("[]")
	}
	if old := n.blocks[slot]; old != nil {
		for _, t := range old.txs {
			n.forget(t)
		}
	}
	n.blocks[slot] = b
	for i, ct := range c.Transactions {
		t, err := parseTx(ct)
		if err != nil {
			panic(fmt.Sprintf("solanafake: AddCapturedBlock(%d): transaction %d: %v", slot, i, err))
		}
		n.include(b, t)
	}
	n.advanceTo(b)
}

// advanceTo makes b the newest block if it is.
func (n *Node) advanceTo(b *block) {
	if b.slot >= n.tip {
		n.tip = b.slot
		n.last = b
	}
}

// AddCapturedTransaction stores a real getTransaction result (encoding
// "json") under sig and puts it in the block at its slot, creating that block
// (with derived hashes) if there is none. sig must be the transaction's first
// signature. It panics on malformed input: captures are fixed test data.
func (n *Node) AddCapturedTransaction(sig string, getTransactionResultJSON []byte) {
	var c capturedTx
	if err := json.Unmarshal(getTransactionResultJSON, &c); err != nil || c.Slot == nil {
		panic(fmt.Sprintf("solanafake: AddCapturedTransaction(%s): not a getTransaction result: %v", sig, err))
	}
	t, err := parseTx(c)
	if err != nil {
		panic(fmt.Sprintf("solanafake: AddCapturedTransaction(%s): %v", sig, err))
	}
	if t.signatures[0] != sig {
		panic(fmt.Sprintf("solanafake: AddCapturedTransaction(%s): first signature is %s", sig, t.signatures[0]))
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if old := n.txs[sig]; old != nil {
		return
	}
	slot := *c.Slot
	b := n.blocks[slot]
	if b == nil {
		parent := n.blocks[0]
		for s, blk := range n.blocks {
			if s < slot && s > parent.slot {
				parent = blk
			}
		}
		b = &block{slot: slot, parentSlot: parent.slot, height: parent.height + 1, hash: n.hash("block"), prevHash: parent.hash, time: c.BlockTime, rewards: json.RawMessage("[]")}
		n.blocks[slot] = b
	}
	n.include(b, t)
	t.blockTime = c.BlockTime
	n.advanceTo(b)
}

// signaturesFor lists addr's transactions newest first.
func (n *Node) signaturesFor(addr string) []sigRef {
	refs := append([]sigRef(nil), n.byAddr[addr]...)
	sort.SliceStable(refs, func(i, j int) bool {
		if refs[i].slot != refs[j].slot {
			return refs[i].slot > refs[j].slot
		}
		return refs[i].pos > refs[j].pos
	})
	return refs
}
