package evm

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/endpoints"
	"github.com/paywatch/paywatch/payment"
)

// rpcHeader is the part of a block header paywatch reads.
type rpcHeader struct {
	Number     *hexutil.Uint64 `json:"number"`
	Hash       *common.Hash    `json:"hash"`
	ParentHash *common.Hash    `json:"parentHash"`
	Timestamp  *hexutil.Uint64 `json:"timestamp"`
}

// rpcBlock is eth_getBlockByNumber(h, true) reduced to what paywatch reads.
type rpcBlock struct {
	rpcHeader
	Transactions []rpcTx `json:"transactions"`
}

type rpcTx struct {
	Hash  *common.Hash    `json:"hash"`
	To    *common.Address `json:"to"`
	Value *hexutil.Big    `json:"value"`
}

type rpcReceipt struct {
	TransactionHash common.Hash     `json:"transactionHash"`
	BlockHash       common.Hash     `json:"blockHash"`
	Status          *hexutil.Uint64 `json:"status"`
	// Root replaces Status in pre-Byzantium receipts, which cannot fail.
	Root *common.Hash `json:"root"`
	// Logs are the transaction's logs (only their block log indexes are
	// read): a token transfer's key is its log's position among them.
	Logs []receiptLog `json:"logs"`
}

type receiptLog struct {
	LogIndex *hexutil.Uint64 `json:"logIndex"`
}

type rpcLog struct {
	Address         common.Address  `json:"address"`
	Topics          []common.Hash   `json:"topics"`
	Data            hexutil.Bytes   `json:"data"`
	BlockHash       common.Hash     `json:"blockHash"`
	TransactionHash common.Hash     `json:"transactionHash"`
	LogIndex        *hexutil.Uint64 `json:"logIndex"`
	Removed         bool            `json:"removed"`
}

// rpcTrace is one element of debug_traceBlockByHash with the callTracer.
type rpcTrace struct {
	TxHash common.Hash `json:"txHash"`
	Result *callFrame  `json:"result"`
	Error  string      `json:"error"`
}

type callFrame struct {
	Type  string          `json:"type"`
	From  *common.Address `json:"from"`
	To    *common.Address `json:"to"`
	Value *hexutil.Big    `json:"value"`
	Error string          `json:"error"`
	Calls []callFrame     `json:"calls"`
}

// found is a transfer with its place in the block, for ordering.
type found struct {
	pos   int   // transaction position
	order int64 // native 0, internal 1+n, token 1<<40 + log index
	tr    chains.Transfer
	// logIndex is a token transfer's block log index (its key, tr.Index,
	// is its log's position in its transaction: txLocalKeys).
	logIndex uint64
}

// Block returns the block at height with the ETH and configured-token
// transfers of successful transactions to watched addresses, in block
// order: each transaction's own value, then what tracing found moved by
// its internal calls, then its token Transfer logs.
func (c *Client) Block(ctx context.Context, height chains.Height, w chains.Watched) (chains.Block, error) {
	// Behind a pool of endpoints, the block, its receipts, logs and traces
	// come from one that showed the height.
	ctx = endpoints.Pin(ctx, int64(height))
	for {
		b, err := c.block(ctx, height, w)
		if endpoints.Again(ctx, err, "block or its receipts, logs or traces missing at a height it showed") {
			continue
		}
		return b, err
	}
}

// block is Block's reads, pinned to one endpoint: the block by number, then
// what it needs beyond its transactions by its hash.
func (c *Client) block(ctx context.Context, height chains.Height, w chains.Watched) (chains.Block, error) {
	blk, err := c.blockByNumber(ctx, height)
	if err != nil {
		return chains.Block{}, err
	}
	out := chains.Block{
		BlockRef: chains.BlockRef{Height: height, Hash: blk.Hash.Hex(), Parent: blk.ParentHash.Hex()},
		Time:     time.Unix(int64(*blk.Timestamp), 0).UTC(),
	}
	if len(blk.Transactions) == 0 {
		out.Endpoint = endpoints.OnlyServer(ctx)
		return out, nil
	}
	x, err := c.blockExtras(ctx, *blk.Hash, height)
	if err != nil {
		return chains.Block{}, err
	}
	// Success per transaction position, when all receipts are known.
	var ok []bool
	if x.haveReceipts {
		if ok, err = successes(x.receipts, blk, height); err != nil {
			return chains.Block{}, err
		}
	}
	native, err := c.nativeTransfers(ctx, blk, ok, w, height)
	if err != nil {
		return chains.Block{}, err
	}
	tokens, err := c.tokenTransfers(x.logs, blk, ok, w, height)
	if err != nil {
		return chains.Block{}, err
	}
	if err := c.txLocalKeys(ctx, tokens, x, blk, height); err != nil {
		return chains.Block{}, err
	}
	var internal []found
	if c.trace {
		if internal, err = c.tracedTransfers(x.traces, blk, ok, w, height); err != nil {
			return chains.Block{}, err
		}
	}
	out.Transfers = inBlockOrder(append(append(native, tokens...), internal...))
	out.Endpoint = endpoints.OnlyServer(ctx)
	return out, nil
}

// blockByNumber reads the block at height with its transactions and checks
// it; a height the node does not have yet is chains.ErrBlockNotFound.
func (c *Client) blockByNumber(ctx context.Context, height chains.Height) (*rpcBlock, error) {
	var blk *rpcBlock
	if err := c.rpc.CallContext(ctx, &blk, "eth_getBlockByNumber", hexutil.Uint64(height), true); err != nil {
		return nil, classify(err, fmt.Sprintf("eth_getBlockByNumber at height %d", height))
	}
	if blk == nil {
		return nil, fmt.Errorf("ethereum block %d: %w", height, chains.ErrBlockNotFound)
	}
	if err := blk.check(height); err != nil {
		return nil, err
	}
	return blk, nil
}

// extras are the answers of the one round trip bound to a block hash.
type extras struct {
	// haveReceipts: receipts holds the block's receipts (the node serves
	// eth_getBlockReceipts).
	haveReceipts bool
	receipts     []rpcReceipt
	logs         []rpcLog
	traces       []rpcTrace
}

// blockExtras asks in one batch for what the block's transfers need beyond
// its transactions: every receipt (unless the node lacks
// eth_getBlockReceipts), the configured tokens' Transfer logs, and the call
// traces when tracing.
func (c *Client) blockExtras(ctx context.Context, hash common.Hash, height chains.Height) (extras, error) {
	var (
		x                         extras
		batch                     []rpc.BatchElem
		iReceipts, iLogs, iTraces = -1, -1, -1
	)
	if !c.noBlockReceipts.Load() {
		iReceipts = len(batch)
		batch = append(batch, rpc.BatchElem{Method: "eth_getBlockReceipts", Args: []any{hash}, Result: &x.receipts})
	}
	if len(c.contracts) > 0 {
		iLogs = len(batch)
		filter := map[string]any{"blockHash": hash, "address": c.contracts, "topics": [][]common.Hash{{TransferTopic}}}
		batch = append(batch, rpc.BatchElem{Method: "eth_getLogs", Args: []any{filter}, Result: &x.logs})
	}
	if c.trace {
		iTraces = len(batch)
		batch = append(batch, rpc.BatchElem{Method: "debug_traceBlockByHash", Args: []any{hash, tracerConfig}, Result: &x.traces})
	}
	if len(batch) > 0 {
		if err := c.rpc.BatchCallContext(ctx, batch); err != nil {
			return extras{}, classify(err, fmt.Sprintf("ethereum block %d %s", height, hash))
		}
	}
	at := func(method string) string { return fmt.Sprintf("%s for block %d %s", method, height, hash) }
	if iReceipts >= 0 {
		x.haveReceipts = true
		if err := batch[iReceipts].Error; err != nil {
			var rerr rpc.Error
			if !errors.As(err, &rerr) || rerr.ErrorCode() != -32601 {
				return extras{}, classify(err, at("eth_getBlockReceipts"))
			}
			c.noBlockReceipts.Store(true)
			c.log.Warn("node lacks eth_getBlockReceipts; fetching receipts per matching transaction", "err", chains.RedactError(err))
			x.haveReceipts = false
		}
	}
	if iLogs >= 0 && batch[iLogs].Error != nil {
		return extras{}, classify(batch[iLogs].Error, at("eth_getLogs"))
	}
	if iTraces >= 0 && batch[iTraces].Error != nil {
		return extras{}, classify(batch[iTraces].Error, at("debug_traceBlockByHash"))
	}
	return x, nil
}

// successes checks that receipts are blk's, one per transaction in order,
// and returns whether each transaction succeeded.
func successes(receipts []rpcReceipt, blk *rpcBlock, height chains.Height) ([]bool, error) {
	if err := checkReceipts(receipts, blk, height); err != nil {
		return nil, err
	}
	ok := make([]bool, len(receipts))
	for i, r := range receipts {
		ok[i] = r.succeeded()
	}
	return ok, nil
}

// nativeTransfers returns the transactions of blk that send value to a
// watched address and succeeded: by ok, or when ok is nil (no block
// receipts) by the receipts of just those transactions.
func (c *Client) nativeTransfers(ctx context.Context, blk *rpcBlock, ok []bool, w chains.Watched, height chains.Height) ([]found, error) {
	// The recipients of value are looked up in one batch, so the watched
	// set's memory loads overlap.
	var cand []int
	var keys [][]byte
	for i := range blk.Transactions {
		if tx := &blk.Transactions[i]; tx.To != nil && tx.Value.ToInt().Sign() > 0 {
			cand = append(cand, i)
			keys = append(keys, tx.To[:])
		}
	}
	watched := make([]bool, len(keys))
	chains.ContainsEach(w, keys, watched)
	var res []found
	var needStatus []int
	for j, i := range cand {
		tx := &blk.Transactions[i]
		if !watched[j] {
			continue
		}
		if ok == nil {
			needStatus = append(needStatus, i)
		} else if !ok[i] {
			continue
		}
		res = append(res, found{pos: i, order: 0, tr: c.transfer(*tx.Hash, chains.NativeIndex, payment.Native, *tx.To, tx.Value.ToInt())})
	}
	if len(needStatus) == 0 {
		return res, nil
	}
	status, err := c.receiptsFor(ctx, blk, needStatus, height)
	if err != nil {
		return nil, err
	}
	kept := res[:0]
	for _, f := range res {
		if status[f.pos] {
			kept = append(kept, f)
		}
	}
	return kept, nil
}

// tokenTransfers returns the ERC-20 Transfer logs (of the configured
// contracts) to watched addresses in successful transactions of blk. A log
// that contradicts the query is chains.ErrInvalidResponse.
func (c *Client) tokenTransfers(logs []rpcLog, blk *rpcBlock, ok []bool, w chains.Watched, height chains.Height) ([]found, error) {
	// Transaction position by hash.
	pos := make(map[common.Hash]int, len(blk.Transactions))
	for i, tx := range blk.Transactions {
		pos[*tx.Hash] = i
	}
	// Every log is checked first and the recipients of those that count
	// are looked up in one batch, so the watched set's memory loads
	// overlap; nothing before the lookup depended on its answer.
	type candidate struct {
		l     *rpcLog
		pos   int
		asset payment.Asset
	}
	var cand []candidate
	var keys [][]byte
	seen := make(map[uint64]struct{}, len(logs))
	for i := range logs {
		l := &logs[i]
		asset, err := c.checkLog(l, *blk.Hash, seen, height)
		if err != nil {
			return nil, err
		}
		if len(l.Topics) != 3 {
			// Not an ERC-20 Transfer (ERC-721 indexes the value as a fourth topic).
			c.log.Debug("skipping Transfer log without 3 topics", "height", height, "log", uint64(*l.LogIndex), "topics", len(l.Topics))
			continue
		}
		if len(l.Data) != 32 {
			return nil, fmt.Errorf("eth_getLogs for block %d: Transfer log %d of %s has %d data bytes, want 32: %w",
				height, uint64(*l.LogIndex), l.TransactionHash, len(l.Data), chains.ErrInvalidResponse)
		}
		p, inBlock := pos[l.TransactionHash]
		if !inBlock {
			return nil, fmt.Errorf("eth_getLogs for block %d: log %d of transaction %s not in the block: %w",
				height, uint64(*l.LogIndex), l.TransactionHash, chains.ErrInvalidResponse)
		}
		if ok != nil && !ok[p] {
			continue // a reverted transaction has no logs; never count one
		}
		cand = append(cand, candidate{l, p, asset})
		keys = append(keys, l.Topics[2][12:])
	}
	watched := make([]bool, len(keys))
	chains.ContainsEach(w, keys, watched)
	var res []found
	for j, cd := range cand {
		if !watched[j] {
			continue
		}
		l, to := cd.l, keys[j]
		amount := new(big.Int).SetBytes(l.Data)
		res = append(res, found{pos: cd.pos, order: 1<<40 + int64(*l.LogIndex), logIndex: uint64(*l.LogIndex),
			tr: c.transfer(l.TransactionHash, int64(*l.LogIndex), cd.asset, common.BytesToAddress(to), amount)})
	}
	return res, nil
}

// txLocalKeys sets each token transfer's key to its log's position among
// its transaction's receipt logs: a function of the transaction alone, so
// that the transaction mined again in another block, where its logs have
// other block log indexes, is the same transfer (issue 32 item 1). The
// receipts come from the block's (when the node serves them) or, for the
// transactions of these transfers only, from eth_getTransactionReceipt. A
// receipt that lacks the log contradicts eth_getLogs: ErrInvalidResponse.
func (c *Client) txLocalKeys(ctx context.Context, tokens []found, x extras, blk *rpcBlock, height chains.Height) error {
	if len(tokens) == 0 {
		return nil
	}
	logsOf := func(pos int) []receiptLog { return x.receipts[pos].Logs }
	if !x.haveReceipts {
		var idx []int
		seen := map[int]bool{}
		for _, f := range tokens {
			if !seen[f.pos] {
				seen[f.pos] = true
				idx = append(idx, f.pos)
			}
		}
		rs, err := c.fetchReceipts(ctx, blk, idx, height)
		if err != nil {
			return err
		}
		logsOf = func(pos int) []receiptLog { return rs[pos].Logs }
	}
	for i := range tokens {
		f := &tokens[i]
		k, err := logPosition(logsOf(f.pos), f.logIndex)
		if err != nil {
			return fmt.Errorf("receipt of %s in block %d: %w", f.tr.TxID, height, err)
		}
		f.tr.Index = k
	}
	return nil
}

// logPosition returns the position of the log with block log index li
// among a transaction's receipt logs, which run consecutively.
func logPosition(logs []receiptLog, li uint64) (int64, error) {
	if len(logs) > 0 && logs[0].LogIndex != nil && li >= uint64(*logs[0].LogIndex) {
		if k := li - uint64(*logs[0].LogIndex); k < uint64(len(logs)) && logs[k].LogIndex != nil && uint64(*logs[k].LogIndex) == li {
			return int64(k), nil
		}
	}
	return 0, fmt.Errorf("no log with index %d among its %d logs: %w", li, len(logs), chains.ErrInvalidResponse)
}

// checkLog checks that l answers the eth_getLogs query for the block hash:
// a live Transfer log of a configured contract, its index not seen before
// (it is added to seen). It returns the contract's asset.
func (c *Client) checkLog(l *rpcLog, hash common.Hash, seen map[uint64]struct{}, height chains.Height) (payment.Asset, error) {
	asset, known := c.tokens[l.Address]
	if !known {
		return "", fmt.Errorf("eth_getLogs for block %d: log from unrequested contract %s: %w", height, l.Address, chains.ErrInvalidResponse)
	}
	if l.BlockHash != hash || l.LogIndex == nil {
		return "", fmt.Errorf("eth_getLogs for block %d %s: log of block %s, index %v: %w", height, hash, l.BlockHash, l.LogIndex, chains.ErrInvalidResponse)
	}
	if l.Removed || len(l.Topics) == 0 || l.Topics[0] != TransferTopic {
		// The filter asked for Transfer logs of this block hash: anything
		// else contradicts the query.
		return "", fmt.Errorf("eth_getLogs for block %d: log %d is not a live Transfer log: %w",
			height, uint64(*l.LogIndex), chains.ErrInvalidResponse)
	}
	if _, dup := seen[uint64(*l.LogIndex)]; dup {
		return "", fmt.Errorf("eth_getLogs for block %d: log index %d twice: %w", height, uint64(*l.LogIndex), chains.ErrInvalidResponse)
	}
	seen[uint64(*l.LogIndex)] = struct{}{}
	return asset, nil
}

// tracedTransfers returns the internal ETH transfers to watched addresses
// that the call traces of blk show, one trace per transaction in order;
// reverted transactions and frames moved nothing.
func (c *Client) tracedTransfers(traces []rpcTrace, blk *rpcBlock, ok []bool, w chains.Watched, height chains.Height) ([]found, error) {
	if len(traces) != len(blk.Transactions) {
		return nil, fmt.Errorf("debug_traceBlockByHash for block %d: %d traces for %d transactions: %w",
			height, len(traces), len(blk.Transactions), chains.ErrInvalidResponse)
	}
	var res []found
	for i := range traces {
		t := &traces[i]
		tx := &blk.Transactions[i]
		if t.TxHash != (common.Hash{}) && t.TxHash != *tx.Hash {
			return nil, fmt.Errorf("debug_traceBlockByHash for block %d: trace %d is of %s, want %s: %w",
				height, i, t.TxHash, tx.Hash, chains.ErrInvalidResponse)
		}
		if t.Error != "" || t.Result == nil {
			return nil, fmt.Errorf("debug_traceBlockByHash for block %d: transaction %s not traced: %q", height, tx.Hash, t.Error)
		}
		if t.Result.Error != "" || (ok != nil && !ok[i]) {
			continue // reverted: no internal transfer happened
		}
		if err := c.internalTransfers(t.Result, i, *tx.Hash, w, &res); err != nil {
			return nil, fmt.Errorf("debug_traceBlockByHash for block %d: %w", height, err)
		}
	}
	return res, nil
}

// inBlockOrder sorts what was found by transaction position, then by order
// within the transaction, and returns the transfers (nil for none).
func inBlockOrder(res []found) []chains.Transfer {
	if len(res) == 0 {
		return nil
	}
	sort.SliceStable(res, func(a, b int) bool {
		if res[a].pos != res[b].pos {
			return res[a].pos < res[b].pos
		}
		return res[a].order < res[b].order
	})
	out := make([]chains.Transfer, len(res))
	for i := range res {
		out[i] = res[i].tr
	}
	return out
}

// internalTransfers appends to res the ETH that the frames below root (the
// trace of the transaction at position pos) moved to watched addresses: by
// a CALL with value, or by a SELFDESTRUCT, which sends the contract's whole
// balance to its beneficiary (whether or not the contract is destroyed,
// EIP-6780). A frame that failed moved nothing, nor did anything below it.
// Frame k in the numbering (see keyedTraceDepth) has index -2-k.
func (c *Client) internalTransfers(root *callFrame, pos int, txid common.Hash, w chains.Watched, res *[]found) error {
	n := 0
	var deeper []*callFrame // frames at keyedTraceDepth that have calls below
	var walk func(f *callFrame, depth, limit int) error
	walk = func(f *callFrame, depth, limit int) error {
		for j := range f.Calls {
			sub := &f.Calls[j]
			idx := -2 - int64(n)
			n++
			if sub.Error != "" {
				continue // the call and everything below it reverted
			}
			if sub.Value != nil && sub.Value.ToInt().Sign() < 0 {
				return fmt.Errorf("negative %s value in %s: %w", sub.Type, txid, chains.ErrInvalidResponse)
			}
			if movesValue(sub) && w.Contains(sub.To[:]) {
				*res = append(*res, found{pos: pos, order: 1 + int64(n), tr: c.transfer(txid, idx, payment.Native, *sub.To, sub.Value.ToInt())})
			}
			switch {
			case len(sub.Calls) == 0:
			case depth < limit:
				if err := walk(sub, depth+1, limit); err != nil {
					return err
				}
			case limit == keyedTraceDepth:
				deeper = append(deeper, sub)
			default:
				return fmt.Errorf("calls nested deeper than %d in %s: %w", maxCallDepth, txid, chains.ErrInvalidResponse)
			}
		}
		return nil
	}
	if err := walk(root, 1, keyedTraceDepth); err != nil {
		return err
	}
	for _, f := range deeper {
		if err := walk(f, keyedTraceDepth+1, maxCallDepth); err != nil {
			return err
		}
	}
	return nil
}

// movesValue reports whether frame f sends ETH to f.To: a CALL with value,
// or a SELFDESTRUCT whose beneficiary is not the contract itself.
func movesValue(f *callFrame) bool {
	if f.To == nil || f.Value == nil || f.Value.ToInt().Sign() <= 0 {
		return false
	}
	switch f.Type {
	case "CALL":
		return true
	case "SELFDESTRUCT":
		return f.From == nil || *f.From != *f.To
	}
	return false
}

func (c *Client) transfer(txid common.Hash, index int64, asset payment.Asset, to common.Address, amount *big.Int) chains.Transfer {
	return chains.Transfer{
		TxID:    txid.Hex(),
		Index:   index,
		Asset:   asset,
		Key:     to.Bytes(),
		Address: to.Hex(),
		Amount:  amount,
	}
}

// check validates the block header and transaction list at height.
func (b *rpcBlock) check(height chains.Height) error {
	bad := func(what string) error {
		return fmt.Errorf("eth_getBlockByNumber at height %d: %s: %w", height, what, chains.ErrInvalidResponse)
	}
	switch {
	case b.Number == nil || b.Hash == nil || b.ParentHash == nil || b.Timestamp == nil || b.Transactions == nil:
		return bad("missing number, hash, parentHash, timestamp or transactions")
	case chains.Height(*b.Number) != height:
		return bad(fmt.Sprintf("block number %d", uint64(*b.Number)))
	case *b.Hash == (common.Hash{}):
		return bad("zero block hash")
	case int64(*b.Timestamp) < 0:
		return bad("timestamp out of range")
	}
	for i := range b.Transactions {
		tx := &b.Transactions[i]
		if tx.Hash == nil || tx.Value == nil {
			return bad(fmt.Sprintf("transaction %d without hash or value", i))
		}
		if tx.Value.ToInt().Sign() < 0 {
			return bad(fmt.Sprintf("transaction %s with a negative value", tx.Hash))
		}
	}
	return nil
}

func (r *rpcReceipt) succeeded() bool {
	if r.Status != nil {
		return *r.Status == 1
	}
	return true // pre-Byzantium (root set; checked in checkReceipts): no failure status existed
}

// checkReceipts verifies that receipts belong to blk, one per transaction in
// order.
func checkReceipts(receipts []rpcReceipt, blk *rpcBlock, height chains.Height) error {
	if len(receipts) != len(blk.Transactions) {
		return fmt.Errorf("eth_getBlockReceipts for block %d: %d receipts for %d transactions: %w",
			height, len(receipts), len(blk.Transactions), chains.ErrInvalidResponse)
	}
	for i := range receipts {
		r := &receipts[i]
		if r.TransactionHash != *blk.Transactions[i].Hash || r.BlockHash != *blk.Hash {
			return fmt.Errorf("eth_getBlockReceipts for block %d: receipt %d is of %s in block %s: %w",
				height, i, r.TransactionHash, r.BlockHash, chains.ErrInvalidResponse)
		}
		if err := r.checkStatus(height); err != nil {
			return err
		}
	}
	return nil
}

func (r *rpcReceipt) checkStatus(height chains.Height) error {
	if (r.Status == nil && r.Root == nil) || (r.Status != nil && *r.Status > 1) {
		return fmt.Errorf("receipt of %s in block %d: no valid status: %w", r.TransactionHash, height, chains.ErrInvalidResponse)
	}
	return nil
}

// receiptsFor fetches the receipts of the transactions at positions idx with
// eth_getTransactionReceipt (for nodes without eth_getBlockReceipts) and
// returns success by position.
func (c *Client) receiptsFor(ctx context.Context, blk *rpcBlock, idx []int, height chains.Height) (map[int]bool, error) {
	rs, err := c.fetchReceipts(ctx, blk, idx, height)
	if err != nil {
		return nil, err
	}
	out := make(map[int]bool, len(idx))
	for p, r := range rs {
		out[p] = r.succeeded()
	}
	return out, nil
}

// fetchReceipts fetches and checks the receipts of the transactions at
// positions idx with eth_getTransactionReceipt, by position.
func (c *Client) fetchReceipts(ctx context.Context, blk *rpcBlock, idx []int, height chains.Height) (map[int]*rpcReceipt, error) {
	rs := make([]*rpcReceipt, len(idx))
	batch := make([]rpc.BatchElem, len(idx))
	for i, p := range idx {
		batch[i] = rpc.BatchElem{Method: "eth_getTransactionReceipt", Args: []any{*blk.Transactions[p].Hash}, Result: &rs[i]}
	}
	if err := c.rpc.BatchCallContext(ctx, batch); err != nil {
		return nil, classify(err, fmt.Sprintf("eth_getTransactionReceipt for block %d", height))
	}
	out := make(map[int]*rpcReceipt, len(idx))
	for i, p := range idx {
		tx := blk.Transactions[p].Hash
		if batch[i].Error != nil {
			return nil, classify(batch[i].Error, fmt.Sprintf("eth_getTransactionReceipt(%s) for block %d", tx, height))
		}
		r := rs[i]
		if r == nil || r.TransactionHash != *tx || r.BlockHash != *blk.Hash {
			return nil, fmt.Errorf("eth_getTransactionReceipt(%s) for block %d %s: missing or of another block: %w",
				tx, height, blk.Hash, chains.ErrInvalidResponse)
		}
		if err := r.checkStatus(height); err != nil {
			return nil, err
		}
		out[p] = r
	}
	return out, nil
}
