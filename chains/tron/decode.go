package tron

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/payment"
)

// TransferTopic is topics[0] of an ERC-20/TRC-20 Transfer(address,address,uint256)
// event as the node prints it: hex, no 0x.
const TransferTopic = "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"

// Contract types and results as the node prints them.
const (
	typeTransfer     = "TransferContract"
	typeTrigger      = "TriggerSmartContract"
	typeCreate       = "CreateSmartContract"
	resultSuccess    = "SUCCESS"
	infoResultFailed = "FAILED"
)

// blockJSON is a block as /wallet/getblockbynum prints it with visible=false,
// reduced to the fields paywatch reads.
type blockJSON struct {
	BlockID      string      `json:"blockID"`
	BlockHeader  *headerJSON `json:"block_header"`
	Transactions []txJSON    `json:"transactions"`
}

type headerJSON struct {
	RawData struct {
		Number     json.Number `json:"number"`
		ParentHash string      `json:"parentHash"`
		Timestamp  json.Number `json:"timestamp"`
	} `json:"raw_data"`
}

type txJSON struct {
	TxID string `json:"txID"`
	Ret  []struct {
		ContractRet string `json:"contractRet"`
	} `json:"ret"`
	RawData struct {
		Contract []contractJSON `json:"contract"`
	} `json:"raw_data"`
}

type contractJSON struct {
	Type      string `json:"type"`
	Parameter struct {
		Value struct {
			ToAddress string      `json:"to_address"`
			Amount    json.Number `json:"amount"`
		} `json:"value"`
	} `json:"parameter"`
}

func (t *txJSON) succeeded() bool {
	return len(t.Ret) > 0 && t.Ret[0].ContractRet == resultSuccess
}

// txInfoJSON is a TransactionInfo as /wallet/gettransactioninfobyblocknum
// prints it: log addresses are 20-byte hex without the 41 prefix.
type txInfoJSON struct {
	ID          string      `json:"id"`
	BlockNumber json.Number `json:"blockNumber"`
	BlockTime   json.Number `json:"blockTimeStamp"`
	Result      string      `json:"result"`
	Receipt     struct {
		Result string `json:"result"`
	} `json:"receipt"`
	Log      []logJSON        `json:"log"`
	Internal []internalTxJSON `json:"internal_transactions"`
}

// internalTxJSON is one entry of a TransactionInfo's internal_transactions:
// a value transfer made by a contract while the transaction ran. Shape from
// protocol.InternalTransaction (Tron.proto: hash, caller_address,
// transferTo_address, callValueInfo {callValue, tokenId}, note, rejected)
// as java-tron's JsonFormat prints it with visible=false: addresses 41-hex,
// int64 as JSON numbers, zero values omitted (an internal call that moves
// nothing prints "callValueInfo": [{}], a kept call has no "rejected").
// Sources: tronprotocol/documentation-en
// docs/api/http/block-and-tx-query/gettransactioninfobyid.md (the Nile
// example 01b4cde4…, copied to testdata) and developers.tron.network
// "Internal transactions" (TRX when tokenId is empty, TRC-10 otherwise;
// rejected when the internal call failed).
type internalTxJSON struct {
	TransferTo    string `json:"transferTo_address"`
	CallValueInfo []struct {
		CallValue json.Number `json:"callValue"`
		TokenID   string      `json:"tokenId"`
	} `json:"callValueInfo"`
	Rejected bool `json:"rejected"`
}

type logJSON struct {
	Address string   `json:"address"`
	Topics  []string `json:"topics"`
	Data    string   `json:"data"`
}

func (i *txInfoJSON) succeeded() bool {
	return i.Result != infoResultFailed && (i.Receipt.Result == "" || i.Receipt.Result == resultSuccess)
}

// checkBlock verifies that b is block height and reports whether a contract
// ran in it, in which case the transaction infos hold its logs.
func checkBlock(height uint64, b *blockJSON) (needInfos bool, err error) {
	if b.BlockID == "" || b.BlockHeader == nil {
		return false, fmt.Errorf("tron: block %d: %w: no blockID or block_header", height, chains.ErrInvalidResponse)
	}
	n, err := parseUint(b.BlockHeader.RawData.Number)
	if err != nil {
		return false, fmt.Errorf("tron: block %d: %w: number %q", height, chains.ErrInvalidResponse, b.BlockHeader.RawData.Number)
	}
	if n != height {
		return false, fmt.Errorf("tron: block %d: %w: node returned block %d", height, chains.ErrInvalidResponse, n)
	}
	for i := range b.Transactions {
		tx := &b.Transactions[i]
		if len(tx.TxID) != 64 {
			return false, fmt.Errorf("tron: block %d: %w: transaction %d has txID %q", height, chains.ErrInvalidResponse, i, tx.TxID)
		}
		if len(tx.RawData.Contract) > 1 {
			// java-tron rejects a transaction whose contract count is not 1.
			return false, fmt.Errorf("tron: block %d tx %s: %w: %d contracts", height, tx.TxID, chains.ErrInvalidResponse, len(tx.RawData.Contract))
		}
		for _, ct := range tx.RawData.Contract {
			if ct.Type == typeTrigger || ct.Type == typeCreate {
				needInfos = true
			}
		}
	}
	return needInfos, nil
}

// decodeInfos parses a gettransactioninfobyblocknum answer for height.
func decodeInfos(height uint64, body []byte) ([]txInfoJSON, error) {
	var infos []txInfoJSON
	if err := json.Unmarshal(body, &infos); err != nil {
		return nil, fmt.Errorf("tron: block %d infos: %w: %v", height, chains.ErrInvalidResponse, err)
	}
	for i := range infos {
		n, err := parseUint(infos[i].BlockNumber)
		if err != nil || n != height {
			return nil, fmt.Errorf("tron: block %d infos: %w: info %s is for block %q", height, chains.ErrInvalidResponse, infos[i].ID, infos[i].BlockNumber)
		}
	}
	return infos, nil
}

// errInfoMismatch marks transaction infos that are not the block's own:
// gettransactioninfobyblocknum is read by number in a second call, and the
// node may have switched forks in between. The client asks for both again.
var errInfoMismatch = errors.New("tron: transaction infos of another fork")

// pairInfos checks that infos are block b's own and not those of another
// fork at the same height. The id sets must agree: no info twice, none
// for a transaction the block does not hold and one for every contract
// call (match checks the last two); a node may leave out the infos of
// plain TRX transfers, so equality is not required. And each info's
// blockTimeStamp, where it carries one, must be the block's timestamp (a
// competing block at the same height comes from another slot): the same
// transactions re-mined on another fork can have other results, so the id
// sets alone are not enough.
func pairInfos(height uint64, b *blockJSON, ms int64, infos []txInfoJSON, byID map[string]*txInfoJSON) error {
	if len(byID) != len(infos) || len(infos) > len(b.Transactions) {
		return fmt.Errorf("%w: %w: block %d: %d transaction infos (%d distinct) for %d transactions of block %s",
			ErrTransient, errInfoMismatch, height, len(infos), len(byID), len(b.Transactions), b.BlockID)
	}
	for i := range infos {
		if infos[i].BlockTime == "" {
			continue
		}
		ts, err := strconv.ParseInt(string(infos[i].BlockTime), 10, 64)
		if err != nil {
			return fmt.Errorf("tron: block %d infos: %w: blockTimeStamp %q", height, chains.ErrInvalidResponse, infos[i].BlockTime)
		}
		if ts != ms {
			return fmt.Errorf("%w: %w: block %d: info %s has blockTimeStamp %d, block %s has %d",
				ErrTransient, errInfoMismatch, height, infos[i].ID, ts, b.BlockID, ms)
		}
	}
	return nil
}

// match reduces a checked block and its infos to the transfers to watched
// accounts, in block order: a transaction's TRX transfer, then its USDT
// Transfer logs in log order, then the TRX its contracts sent internally.
func (c *Client) match(height uint64, b *blockJSON, infos []txInfoJSON, w chains.Watched) (chains.Block, error) {
	raw := &b.BlockHeader.RawData
	ms, err := strconv.ParseInt(string(raw.Timestamp), 10, 64)
	if raw.Timestamp == "" {
		ms, err = 0, nil
	}
	if err != nil {
		return chains.Block{}, fmt.Errorf("tron: block %d: %w: timestamp %q", height, chains.ErrInvalidResponse, raw.Timestamp)
	}
	out := chains.Block{
		BlockRef: chains.BlockRef{Height: chains.Height(height), Hash: b.BlockID, Parent: raw.ParentHash},
		Time:     time.UnixMilli(ms).UTC(),
	}

	var byID map[string]*txInfoJSON
	if len(infos) > 0 {
		byID = make(map[string]*txInfoJSON, len(infos))
		for i := range infos {
			byID[infos[i].ID] = &infos[i]
		}
		if err := pairInfos(height, b, ms, infos, byID); err != nil {
			return chains.Block{}, err
		}
	}
	w = prefetch(b, byID, w)
	seen := 0
	var acct [20]byte
	for i := range b.Transactions {
		tx := &b.Transactions[i]
		info := byID[tx.TxID]
		if info != nil {
			seen++
		}
		for _, ct := range tx.RawData.Contract {
			switch ct.Type {
			case typeTransfer:
				v := &ct.Parameter.Value
				if !decodeAccount(&acct, v.ToAddress) {
					return chains.Block{}, fmt.Errorf("tron: block %d tx %s: %w: to_address %q", height, tx.TxID, chains.ErrInvalidResponse, v.ToAddress)
				}
				if !tx.succeeded() || !w.Contains(acct[:]) {
					continue
				}
				sun, err := strconv.ParseInt(string(v.Amount), 10, 64)
				if err != nil || sun <= 0 {
					return chains.Block{}, fmt.Errorf("tron: block %d tx %s: %w: amount %q", height, tx.TxID, chains.ErrInvalidResponse, v.Amount)
				}
				key := append([]byte(nil), acct[:]...)
				out.Transfers = append(out.Transfers, chains.Transfer{
					TxID: tx.TxID, Index: chains.NativeIndex, Asset: payment.Native,
					Key: key, Address: Address(key), Amount: big.NewInt(sun),
				})
			case typeTrigger, typeCreate:
				if info == nil {
					// The infos come from a second call; the node's head may
					// have moved to another fork in between. Ask again.
					return chains.Block{}, fmt.Errorf("%w: %w: block %d: no transaction info for contract call %s", ErrTransient, errInfoMismatch, height, tx.TxID)
				}
			}
		}
		if info == nil || !tx.succeeded() || !info.succeeded() {
			continue
		}
		var err error
		if out.Transfers, err = c.matchLogs(height, tx.TxID, info.Log, w, out.Transfers); err != nil {
			return chains.Block{}, err
		}
		if out.Transfers, err = matchInternal(height, tx.TxID, info.Internal, w, out.Transfers); err != nil {
			return chains.Block{}, err
		}
	}
	if seen != len(infos) {
		return chains.Block{}, fmt.Errorf("%w: %w: block %d: %d transaction infos do not belong to block %s", ErrTransient, errInfoMismatch, height, len(infos)-seen, b.BlockID)
	}
	return out, nil
}

// prefetch looks up in one batch every account the matching may ask about,
// in the order it asks, per transaction: the recipients of its transfer
// contracts, the last topic of its 3-topic logs, the recipients of its
// internal transactions (more than it asks: conditions and errors are left
// to the matching). The watched set overlaps the lookups' memory loads;
// the matching keeps its one-pass shape and gets the same answers.
func prefetch(b *blockJSON, byID map[string]*txInfoJSON, w chains.Watched) chains.Watched {
	var flat []byte
	var acct [20]byte
	var topic [32]byte
	for i := range b.Transactions {
		tx := &b.Transactions[i]
		for _, ct := range tx.RawData.Contract {
			if ct.Type == typeTransfer && decodeAccount(&acct, ct.Parameter.Value.ToAddress) {
				flat = append(flat, acct[:]...)
			}
		}
		info := byID[tx.TxID]
		if info == nil {
			continue
		}
		for j := range info.Log {
			if lg := &info.Log[j]; len(lg.Topics) == 3 && decodeHex(topic[:], lg.Topics[2]) {
				flat = append(flat, topic[12:]...)
			}
		}
		for k := range info.Internal {
			if decodeAccount(&acct, info.Internal[k].TransferTo) {
				flat = append(flat, acct[:]...)
			}
		}
	}
	keys := make([][]byte, len(flat)/len(acct))
	for i := range keys {
		keys[i] = flat[i*len(acct) : (i+1)*len(acct) : (i+1)*len(acct)]
	}
	return chains.Prefetch(w, keys)
}

// matchLogs appends the USDT Transfer logs of one successful transaction
// that pay a watched account. Index is the log's position in the
// transaction's log list, so (txID, Index) is unique.
func (c *Client) matchLogs(height uint64, txID string, logs []logJSON, w chains.Watched, dst []chains.Transfer) ([]chains.Transfer, error) {
	var addr, to [20]byte
	var topic [32]byte
	for i := range logs {
		lg := &logs[i]
		a := lg.Address
		if len(a) == 42 && a[:2] == "41" {
			a = a[2:] // tolerate the 21-byte form some proxies print
		}
		if !decodeHex(addr[:], a) {
			return nil, fmt.Errorf("tron: block %d tx %s log %d: %w: address %q", height, txID, i, chains.ErrInvalidResponse, lg.Address)
		}
		if addr != c.usdt || len(lg.Topics) != 3 || !strings.EqualFold(lg.Topics[0], TransferTopic) {
			continue
		}
		if !decodeHex(topic[:], lg.Topics[2]) {
			return nil, fmt.Errorf("tron: block %d tx %s log %d: %w: topic %q", height, txID, i, chains.ErrInvalidResponse, lg.Topics[2])
		}
		copy(to[:], topic[12:])
		if !w.Contains(to[:]) {
			continue
		}
		if len(lg.Data) != 64 {
			return nil, fmt.Errorf("tron: block %d tx %s log %d: %w: data %q", height, txID, i, chains.ErrInvalidResponse, lg.Data)
		}
		amount, ok := new(big.Int).SetString(lg.Data, 16)
		if !ok {
			return nil, fmt.Errorf("tron: block %d tx %s log %d: %w: data %q", height, txID, i, chains.ErrInvalidResponse, lg.Data)
		}
		key := append([]byte(nil), to[:]...)
		dst = append(dst, chains.Transfer{
			TxID: txID, Index: int64(i), Asset: payment.USDT,
			Key: key, Address: Address(key), Amount: amount,
		})
	}
	return dst, nil
}

// matchInternal appends the TRX that contracts sent to a watched account
// during one successful transaction (its internal_transactions), like the
// internal ETH transfers the evm source finds by tracing. A rejected internal
// transaction moved nothing; a callValueInfo entry with a tokenId is TRC-10
// and ignored; an entry without callValue moved 0 sun. Index is -2 - k for
// the k-th internal transaction, so (txID, Index) never collides with the
// transaction's own TransferContract (chains.NativeIndex) or its logs (≥ 0).
func matchInternal(height uint64, txID string, its []internalTxJSON, w chains.Watched, dst []chains.Transfer) ([]chains.Transfer, error) {
	var to [20]byte
	for k := range its {
		it := &its[k]
		if it.Rejected {
			continue
		}
		var sun int64
		for j := range it.CallValueInfo {
			cv := &it.CallValueInfo[j]
			if cv.TokenID != "" || cv.CallValue == "" {
				continue
			}
			v, err := strconv.ParseInt(string(cv.CallValue), 10, 64)
			if err != nil || v < 0 || v > math.MaxInt64-sun {
				return nil, fmt.Errorf("tron: block %d tx %s internal transaction %d: %w: callValue %q", height, txID, k, chains.ErrInvalidResponse, cv.CallValue)
			}
			sun += v
		}
		if sun == 0 {
			continue
		}
		if !decodeAccount(&to, it.TransferTo) {
			return nil, fmt.Errorf("tron: block %d tx %s internal transaction %d: %w: transferTo_address %q", height, txID, k, chains.ErrInvalidResponse, it.TransferTo)
		}
		if !w.Contains(to[:]) {
			continue
		}
		key := append([]byte(nil), to[:]...)
		dst = append(dst, chains.Transfer{
			TxID: txID, Index: -2 - int64(k), Asset: payment.Native,
			Key: key, Address: Address(key), Amount: big.NewInt(sun),
		})
	}
	return dst, nil
}
