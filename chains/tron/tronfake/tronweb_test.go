package tronfake_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"net/http/httptest"
	"os/exec"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcutil/base58"
	"github.com/ethereum/go-ethereum/crypto/keccak"

	"github.com/paywatch/paywatch/chains/tron/tronfake"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/devnet/walletjs"
)

// TestTronWeb has the real TronWeb (devnet/walletjs's pinned version) pay
// through the simulated node and read the results back
// (testdata/tronweb.cjs): a TRX transfer and a USDT transfer as most code
// sends them, a transfer the node built (TronWeb re-encodes its raw_data
// and refuses it unless raw_data_hex and txID match), broadcasthex; and the
// refusals with java-tron's codes and messages: a replay, a foreign
// signature, a balance too small, a forged reference block, an expired
// transaction.
func TestTronWeb(t *testing.T) {
	js, err := walletjs.Find()
	devnettest.Need(t, "node with TronWeb", err)

	n := tronfake.New()
	n.SetSolidifiedLag(2)
	srv := httptest.NewServer(n)
	defer srv.Close()
	seed := sha256.Sum256([]byte("tronfake TronWeb test key"))
	priv, _ := btcec.PrivKeyFromBytes(seed[:])
	h := keccak.NewLegacyKeccak256()
	h.Write(priv.PubKey().SerializeUncompressed()[1:])
	from := h.Sum(nil)[12:]
	to := acct(42)
	usdt := acct(43)
	n.Fund(from, 10_000_000_000)
	n.AddTRC20(usdt, "Tether USD", "USDT", 6)
	if err := n.MintTRC20(usdt, from, big.NewInt(9_000_000)); err != nil {
		t.Fatal(err)
	}
	n.Mine(25) // block 1 is then more than 60 s of chain time old
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	go n.Produce(ctx, 100*time.Millisecond)

	start := time.Now()
	cmd := js.Command(ctx, "testdata/tronweb.cjs",
		"TRON_URL="+srv.URL, "TRON_PRIVATE_KEY="+hex.EncodeToString(seed[:]),
		"TO="+base58.CheckEncode(to, 0x41), "USDT="+base58.CheckEncode(usdt, 0x41))
	outb, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("tronweb.cjs: %v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	t.Logf("TronWeb script: %s", time.Since(start).Round(time.Millisecond))
	var out struct {
		TRX struct {
			Result bool
			TxID   string
		}
		USDT    struct{ TxID string }
		Created struct {
			Result          bool
			TxID, BuiltTxID string
		}
		Replay, WrongKey, Balance, Tapos, Expired struct {
			Code, Message, Signer string
		}
		Hex struct {
			Result        bool
			TxID, HexTxID string
		}
		USDTInfo struct {
			Result string
			Energy int64
			Fee    int64
			Log    int
			Block  int64
		}
		TRXInfo struct {
			Fee     int64
			Receipt map[string]int64
		}
		ToBalance int64
		ToTokens  string
		Mined     struct {
			Ret        string
			Signatures int
		}
	}
	if err := json.Unmarshal(outb, &out); err != nil {
		t.Fatalf("%v: %s", err, outb)
	}
	t.Logf("%s", outb)
	if !out.TRX.Result || len(out.TRX.TxID) != 64 || out.USDT.TxID == "" {
		t.Errorf("payments: %+v %+v", out.TRX, out.USDT)
	}
	if !out.Created.Result || out.Created.TxID != out.Created.BuiltTxID {
		t.Errorf("node-built transfer: %+v", out.Created)
	}
	if !out.Hex.Result || out.Hex.TxID != out.Hex.HexTxID {
		t.Errorf("broadcasthex: %+v", out.Hex)
	}
	for _, c := range []struct {
		name       string
		got        struct{ Code, Message, Signer string }
		code, text string
	}{
		{"replay", out.Replay, "DUP_TRANSACTION_ERROR", "Dup transaction."},
		{"foreign key", out.WrongKey, "SIGERROR", "Validate signature error: "},
		{"balance", out.Balance, "CONTRACT_VALIDATE_ERROR", "Contract validate error : Validate TransferContract error, balance is not sufficient."},
		{"forged reference", out.Tapos, "TAPOS_ERROR", "Tapos check error."},
		{"expired", out.Expired, "TRANSACTION_EXPIRATION_ERROR", "Transaction expired"},
	} {
		if c.got.Code != c.code || len(c.got.Message) < len(c.text) || c.got.Message[:len(c.text)] != c.text {
			t.Errorf("%s: %+v, want %s %q", c.name, c.got, c.code, c.text)
		}
	}
	if want := "is signed by " + out.WrongKey.Signer + " but it is not contained of permission."; len(out.WrongKey.Message) < len(want) ||
		out.WrongKey.Message[len(out.WrongKey.Message)-len(want):] != want {
		t.Errorf("foreign key message %q, want it to end %q", out.WrongKey.Message, want)
	}
	// The USDT transfer to a new holder: 29631 energy burned at 100 sun.
	if out.USDTInfo.Result != "SUCCESS" || out.USDTInfo.Energy != 29_631 || out.USDTInfo.Fee < 2_963_100 || out.USDTInfo.Log != 1 {
		t.Errorf("USDT info: %+v", out.USDTInfo)
	}
	// The first transfer created the recipient's account.
	if out.TRXInfo.Fee != 1_100_000 || out.TRXInfo.Receipt["net_fee"] != 100_000 {
		t.Errorf("TRX info: %+v", out.TRXInfo)
	}
	if out.ToBalance != 1_500_000+1_000+2_000 || n.Balance(to) != out.ToBalance {
		t.Errorf("recipient balance %d (node %d), want %d", out.ToBalance, n.Balance(to), 1_503_000)
	}
	if out.ToTokens != "2500000" || n.TokenBalance(usdt, to).Int64() != 2_500_000 {
		t.Errorf("recipient tokens %s", out.ToTokens)
	}
	if out.Mined.Ret != "SUCCESS" || out.Mined.Signatures != 1 {
		t.Errorf("mined transaction: %+v", out.Mined)
	}
}
