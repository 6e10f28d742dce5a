package tron

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"testing"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/payment"
)

// anyAccount watches every account.
type anyAccount struct{}

func (anyAccount) Contains([]byte) bool { return true }

var maxUint256 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))

// FuzzTronBlock runs a getblockbynum answer and a
// gettransactioninfobyblocknum answer through the production checks and
// matcher, watching every account: every transfer reported names an
// account and an amount the answers hold, and amounts stay within what the
// protocol can represent (TRX balances are int64 sun, TRC-20 amounts
// uint256).
func FuzzTronBlock(f *testing.F) {
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	f.Add(uint64(66985120), read("reconstructed_block_66985120.json"), read("reconstructed_infos_66985120.json"))
	f.Add(uint64(30864600), read("reconstructed_block_30864600.json"), read("mainnet_http_gettransactioninfobyblocknum_30864600.json"))
	f.Add(uint64(30864544), read("mainnet_http_getblockbynum_30864544.json"), []byte(`[]`))
	f.Add(uint64(47964392), read("mainnet_http_getnowblock_47964392.json"), []byte(`[]`))
	c, err := New(Config{URL: "http://127.0.0.1:1", USDTContract: "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, height uint64, block, infosBody []byte) {
		var b blockJSON
		if json.Unmarshal(block, &b) != nil {
			return
		}
		need, err := checkBlock(height, &b)
		if err != nil {
			return
		}
		var infos []txInfoJSON
		if need {
			if infos, err = decodeInfos(height, infosBody); err != nil {
				return
			}
		}
		out, err := c.match(height, &b, infos, anyAccount{})
		if err != nil {
			return
		}
		input := bytes.ToLower(append(append([]byte{}, block...), infosBody...))
		for _, tr := range out.Transfers {
			if tr.Amount == nil || tr.Amount.Sign() < 0 {
				t.Fatalf("transfer %s: amount %v", tr.TxID, tr.Amount)
			}
			limit := maxUint256
			if tr.Asset == payment.Native {
				limit = big.NewInt(math.MaxInt64)
			}
			if tr.Amount.Cmp(limit) > 0 {
				t.Fatalf("transfer %s: %v %s beyond what the protocol holds", tr.TxID, tr.Amount, tr.Asset)
			}
			if len(tr.Key) != 20 || !bytes.Contains(input, []byte(hex.EncodeToString(tr.Key))) {
				t.Fatalf("transfer %s: account %x is not in the answers", tr.TxID, tr.Key)
			}
			dec := []byte(tr.Amount.String())
			word := []byte(fmt.Sprintf("%064x", tr.Amount))
			if !bytes.Contains(input, dec) && !bytes.Contains(input, word) {
				t.Fatalf("transfer %s: amount %v is not in the answers", tr.TxID, tr.Amount)
			}
		}
		if out.Height != chains.Height(height) {
			t.Fatalf("block %d reported as %d", height, out.Height)
		}
	})
}
