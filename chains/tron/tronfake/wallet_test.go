package tronfake

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/ecdsa"
	"github.com/ethereum/go-ethereum/crypto/keccak"
)

// testKey is a wallet key of the tests: its 41-prefixed address and a
// signer of txIDs (r ‖ s ‖ v, v = recovery id, as TronWeb signs).
type testKey struct {
	priv *btcec.PrivateKey
	addr []byte
}

func newTestKey(seed string) testKey {
	d := sha256.Sum256([]byte(seed))
	priv, _ := btcec.PrivKeyFromBytes(d[:])
	h := keccak.NewLegacyKeccak256()
	h.Write(priv.PubKey().SerializeUncompressed()[1:])
	return testKey{priv: priv, addr: append([]byte{0x41}, h.Sum(nil)[12:]...)}
}

func (k testKey) sign(txID string) string {
	hash, _ := hex.DecodeString(txID)
	c, err := ecdsa.SignCompact(k.priv, hash, false) // header ‖ r ‖ s
	if err != nil {
		panic(err)
	}
	return hex.EncodeToString(append(c[1:], c[0]-27))
}

type walletClient struct {
	t   *testing.T
	srv *httptest.Server
}

func (c walletClient) post(path string, body any) map[string]any {
	c.t.Helper()
	b, ok := body.(string)
	if !ok {
		b = string(mustJSON(body))
	}
	resp, err := http.Post(c.srv.URL+path, "application/json", strings.NewReader(b))
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		c.t.Fatalf("%s: %v: %s", path, err, data)
	}
	return out
}

// broadcast signs tx (a createtransaction answer) with k and sends it.
func (c walletClient) broadcast(tx map[string]any, k testKey) map[string]any {
	c.t.Helper()
	tx["signature"] = []string{k.sign(tx["txID"].(string))}
	return c.post("/wallet/broadcasttransaction", tx)
}

// refused checks a broadcast answer: the code and the hex message.
func refused(t *testing.T, got map[string]any, code, msg string) {
	t.Helper()
	m, _ := hex.DecodeString(got["message"].(string))
	if got["code"] != code || !strings.Contains(string(m), msg) || got["result"] != nil {
		t.Fatalf("answer %v (message %q), want %s %q", got, m, code, msg)
	}
}

func TestWalletTransactions(t *testing.T) {
	n := New()
	n.SetSolidifiedLag(2)
	srv := httptest.NewServer(n)
	defer srv.Close()
	c := walletClient{t, srv}
	alice, bob, mallory := newTestKey("alice"), newTestKey("bob"), newTestKey("mallory")
	usdt := acct20("usdt")
	n.Fund(alice.addr, 1_000_000_000) // 1,000 TRX
	n.AddTRC20(usdt, "Tether USD", "USDT", 6)
	if err := n.MintTRC20(usdt, alice.addr, big.NewInt(50_000_000)); err != nil {
		t.Fatal(err)
	}
	n.Mine(3)

	// createtransaction builds what TronWeb would: raw_data_hex is the
	// protobuf of raw_data, txID its sha256, referencing the head.
	tx := c.post("/wallet/createtransaction", map[string]any{
		"owner_address": hex.EncodeToString(alice.addr), "to_address": hex.EncodeToString(bob.addr), "amount": 5_000_000})
	raw := tx["raw_data"].(map[string]any)
	rawBytes, _ := hex.DecodeString(tx["raw_data_hex"].(string))
	if sum := sha256.Sum256(rawBytes); hex.EncodeToString(sum[:]) != tx["txID"] {
		t.Fatalf("txID is not sha256(raw_data_hex): %v", tx)
	}
	head := n.BlockID(n.Tip())
	if raw["ref_block_bytes"] != head[12:16] || raw["ref_block_hash"] != head[16:32] || tx["visible"] != false {
		t.Fatalf("reference: %v, head %s", raw, head)
	}
	if got := c.broadcast(tx, alice); got["result"] != true || got["txid"] != tx["txID"] {
		t.Fatalf("broadcast: %v", got)
	}
	// Replayed: DUP_TRANSACTION_ERROR.
	refused(t, c.broadcast(tx, alice), codeDup, "Dup transaction.")
	// At the head the transfer is applied at once; the solidity API does not
	// see it yet, and bob has no account there.
	if got := c.post("/wallet/getaccount", map[string]any{"address": hex.EncodeToString(bob.addr)}); got["balance"] != 5e6 {
		t.Fatalf("bob at the head: %v", got)
	}
	if got := c.post("/walletsolidity/getaccount", map[string]any{"address": hex.EncodeToString(bob.addr)}); len(got) != 0 {
		t.Fatalf("bob at the solidified block: %v", got)
	}
	n.Mine(1)
	id := tx["txID"].(string)
	info := c.post("/wallet/gettransactioninfobyid", map[string]any{"value": id})
	// Bob's account was created: 1 TRX system fee plus 0.1 TRX bandwidth.
	if info["fee"] != 1_100_000.0 || info["receipt"].(map[string]any)["net_fee"] != 100_000.0 || info["blockNumber"] != 4.0 {
		t.Fatalf("info: %v", info)
	}
	mined := c.post("/wallet/gettransactionbyid", map[string]any{"value": id})
	if mined["signature"].([]any)[0] != tx["signature"].([]string)[0] || mined["raw_data_hex"] != tx["raw_data_hex"] {
		t.Fatalf("mined transaction: %v", mined)
	}
	if got := n.Balance(alice.addr); got != 1_000_000_000-5_000_000-1_100_000 {
		t.Fatalf("alice: %d", got)
	}

	// A second transfer to an existing account uses the free bandwidth.
	tx = c.post("/wallet/createtransaction", map[string]any{
		"owner_address": hex.EncodeToString(alice.addr), "to_address": hex.EncodeToString(bob.addr), "amount": 1})
	if got := c.broadcast(tx, alice); got["result"] != true {
		t.Fatalf("second transfer: %v", got)
	}
	n.Mine(1)
	info = c.post("/wallet/gettransactioninfobyid", map[string]any{"value": tx["txID"]})
	if _, fee := info["fee"]; fee || info["receipt"].(map[string]any)["net_usage"] == nil {
		t.Fatalf("free bandwidth: %v", info)
	}

	// Signed by another key: SIGERROR naming the signer.
	tx = c.post("/wallet/createtransaction", map[string]any{
		"owner_address": hex.EncodeToString(alice.addr), "to_address": hex.EncodeToString(bob.addr), "amount": 7})
	refused(t, c.broadcast(tx, mallory), codeSigError, "is signed by "+encode58(mallory.addr)+" but it is not contained of permission.")
	// A changed amount after signing: the node rebuilds raw_data from the
	// JSON, so the signature no longer matches.
	tx["signature"] = []string{alice.sign(tx["txID"].(string))}
	tx["raw_data"].(map[string]any)["contract"].([]any)[0].(map[string]any)["parameter"].(map[string]any)["value"].(map[string]any)["amount"] = 7_000_000
	refused(t, c.post("/wallet/broadcasttransaction", tx), codeSigError, "but it is not contained of permission.")
	// No signature at all.
	delete(tx, "signature")
	refused(t, c.post("/wallet/broadcasttransaction", tx), codeSigError, "miss sig or contract")

	// The balance: createtransaction refuses, and so does a broadcast.
	got := c.post("/wallet/createtransaction", map[string]any{
		"owner_address": hex.EncodeToString(bob.addr), "to_address": hex.EncodeToString(alice.addr), "amount": 5_000_002})
	if got["Error"] != "class org.tron.core.exception.ContractValidateException : Validate TransferContract error, balance is not sufficient." {
		t.Fatalf("createtransaction over the balance: %v", got)
	}
	over := n.signedTransfer(bob.addr, alice.addr, 5_000_002, nil)
	refused(t, c.broadcast(over, bob), codeContractValid, "Contract validate error : Validate TransferContract error, balance is not sufficient.")
	// An unknown owner account.
	refused(t, c.broadcast(n.signedTransfer(mallory.addr, bob.addr, 1, nil), mallory), codeContractValid, "does not exist")

	// A reference block that is not on this chain: TAPOS_ERROR; an old
	// expiration: TRANSACTION_EXPIRATION_ERROR.
	refused(t, c.broadcast(n.signedTransfer(alice.addr, bob.addr, 9, func(r *rawData) { r.refBlockHash = make([]byte, 8) }), alice),
		codeTapos, "Tapos check error.")
	refused(t, c.broadcast(n.signedTransfer(alice.addr, bob.addr, 9, func(r *rawData) { r.expiration -= expirationMs }), alice),
		codeExpiration, "Transaction expired")
	n.Mine(21) // 63 s of chain time: a transaction built before is expired
	late := n.signedTransfer(alice.addr, bob.addr, 9, func(r *rawData) {
		h := n.blocks[n.Tip()-21]
		id, _ := hex.DecodeString(h.id)
		r.refBlockBytes, r.refBlockHash, r.expiration = id[6:8], id[8:16], h.timestamp+expirationMs
	})
	refused(t, c.broadcast(late, alice), codeExpiration, "Transaction expired")

	// TRC-20: triggersmartcontract builds the call from function_selector
	// and parameter; the balance moves and the Transfer log is in the info.
	param := hex.EncodeToString(word(bob.addr[1:])) + hex.EncodeToString(word(big.NewInt(2_500_000).Bytes()))
	trig := c.post("/wallet/triggersmartcontract", map[string]any{
		"owner_address": hex.EncodeToString(alice.addr), "contract_address": hex.EncodeToString(wire(usdt)),
		"function_selector": "transfer(address,uint256)", "parameter": param, "fee_limit": 100_000_000, "call_value": 0})
	if trig["result"].(map[string]any)["result"] != true {
		t.Fatalf("triggersmartcontract: %v", trig)
	}
	ttx := trig["transaction"].(map[string]any)
	value := ttx["raw_data"].(map[string]any)["contract"].([]any)[0].(map[string]any)["parameter"].(map[string]any)["value"].(map[string]any)
	if value["data"] != "a9059cbb"+param || ttx["raw_data"].(map[string]any)["fee_limit"] != 1e8 {
		t.Fatalf("trigger transaction: %v", ttx)
	}
	if got := c.broadcast(ttx, alice); got["result"] != true {
		t.Fatalf("broadcast trigger: %v", got)
	}
	n.Mine(1)
	info = c.post("/wallet/gettransactioninfobyid", map[string]any{"value": ttx["txID"]})
	rc := info["receipt"].(map[string]any)
	if rc["result"] != "SUCCESS" || rc["energy_usage_total"] != float64(energyTransferNewHolder) ||
		rc["energy_fee"] != float64(energyTransferNewHolder*energyFee) || len(info["log"].([]any)) != 1 {
		t.Fatalf("trigger info: %v", info)
	}
	if n.TokenBalance(usdt, bob.addr).Int64() != 2_500_000 || n.TokenBalance(usdt, alice.addr).Int64() != 47_500_000 {
		t.Fatalf("token balances: bob %s alice %s", n.TokenBalance(usdt, bob.addr), n.TokenBalance(usdt, alice.addr))
	}
	// balanceOf is a constant call.
	bal := c.post("/wallet/triggerconstantcontract", map[string]any{
		"owner_address": hex.EncodeToString(alice.addr), "contract_address": hex.EncodeToString(wire(usdt)),
		"function_selector": "balanceOf(address)", "parameter": hex.EncodeToString(word(bob.addr[1:]))})
	if bal["constant_result"].([]any)[0] != hex.EncodeToString(word(big.NewInt(2_500_000).Bytes())) {
		t.Fatalf("balanceOf: %v", bal)
	}
	// More than the token balance: accepted, mined as REVERT, nothing moves.
	param = hex.EncodeToString(word(bob.addr[1:])) + hex.EncodeToString(word(big.NewInt(99_000_000).Bytes()))
	trig = c.post("/wallet/triggersmartcontract", map[string]any{
		"owner_address": hex.EncodeToString(alice.addr), "contract_address": hex.EncodeToString(wire(usdt)),
		"function_selector": "transfer(address,uint256)", "parameter": param, "fee_limit": 100_000_000})
	ttx = trig["transaction"].(map[string]any)
	if got := c.broadcast(ttx, alice); got["result"] != true {
		t.Fatalf("broadcast reverting call: %v", got)
	}
	n.Mine(1)
	info = c.post("/wallet/gettransactioninfobyid", map[string]any{"value": ttx["txID"]})
	if info["result"] != "FAILED" || info["receipt"].(map[string]any)["result"] != "REVERT" || n.TokenBalance(usdt, bob.addr).Int64() != 2_500_000 {
		t.Fatalf("reverted call: %v", info)
	}
	// An unknown contract.
	trig = c.post("/wallet/triggersmartcontract", map[string]any{
		"owner_address": hex.EncodeToString(alice.addr), "contract_address": hex.EncodeToString(bob.addr),
		"function_selector": "transfer(address,uint256)", "parameter": param, "fee_limit": 100_000_000})
	if r := trig["result"].(map[string]any); r["code"] != codeContractValid ||
		r["message"] != hex.EncodeToString([]byte("No contract or not a valid smart contract")) {
		t.Fatalf("unknown contract: %v", trig)
	}

	// broadcasthex takes the protobuf.
	st := n.signedTransfer(alice.addr, bob.addr, 3, nil)
	sig, _ := hex.DecodeString(alice.sign(st["txID"].(string)))
	rawBytes, _ = hex.DecodeString(st["raw_data_hex"].(string))
	hx := c.post("/wallet/broadcasthex", map[string]any{"transaction": hex.EncodeToString(marshalTx(rawBytes, [][]byte{sig}))})
	if hx["result"] != true || hx["code"] != "SUCCESS" || hx["txid"] != st["txID"] || !strings.Contains(hx["transaction"].(string), `"raw_data"`) {
		t.Fatalf("broadcasthex: %v", hx)
	}
	hx = c.post("/wallet/broadcasthex", map[string]any{"transaction": hex.EncodeToString(marshalTx(rawBytes, [][]byte{sig}))})
	if hx["result"] != false || hx["code"] != codeDup || hx["message"] != "Dup transaction." {
		t.Fatalf("broadcasthex replayed: %v", hx)
	}

	// A reorg above the solidified block undoes what its blocks held.
	n.Mine(1)
	before := n.Balance(bob.addr)
	tx = c.post("/wallet/createtransaction", map[string]any{
		"owner_address": hex.EncodeToString(alice.addr), "to_address": hex.EncodeToString(bob.addr), "amount": 1_000})
	c.broadcast(tx, alice)
	n.Mine(1)
	if n.Balance(bob.addr) != before+1_000 {
		t.Fatalf("bob before the reorg: %d", n.Balance(bob.addr))
	}
	if err := n.Reorg(1); err != nil {
		t.Fatal(err)
	}
	if n.Balance(bob.addr) != before {
		t.Fatalf("bob after the reorg: %d, want %d", n.Balance(bob.addr), before)
	}
}

func acct20(seed string) []byte {
	s := sha256.Sum256([]byte(seed))
	return s[:20]
}

// signedTransfer builds an unsigned TransferContract on the head, changed
// by edit, as a createtransaction answer.
func (n *Node) signedTransfer(from, to []byte, sun int64, edit func(*rawData)) map[string]any {
	v := transferValue{owner: from, to: to, amount: sun}
	r := &rawData{contracts: []txContract{{ctype: ctTransfer, typeURL: "type.googleapis.com/protocol.TransferContract", value: v.marshal()}}}
	n.mu.Lock()
	n.referenceLocked(r)
	n.mu.Unlock()
	if edit != nil {
		edit(r)
	}
	out, err := createdJSON(r, nil)
	if err != nil {
		panic(err)
	}
	return out
}
