package tronfake

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/btcsuite/btcd/btcec/v2/ecdsa"
	"github.com/btcsuite/btcd/btcutil/base58"
	"github.com/ethereum/go-ethereum/crypto/keccak"
)

// The simulated node's accounts: what a wallet's transaction is checked
// against and changes. Payments queued by PayTRX, PayTRC20 and CallContract
// (the conformance and scanner tests' shortcuts) do not touch them; only
// Fund, AddTRC20, MintTRC20 and the signed transactions of the wallet
// endpoints (walletapi.go) do.

// Chain parameters of mainnet (getchainparameters), used for fees.
const (
	// transactionFee is getTransactionFee: sun per bandwidth byte burned
	// when the free bandwidth is used up.
	transactionFee = 1000
	// freeNetLimit is getFreeNetLimit: the free bandwidth of every account
	// per 24-hour window.
	freeNetLimit = 600
	// createAccountFee is getCreateAccountFee: the bandwidth fee of a
	// transaction that creates an account (receipt.net_fee 100000).
	createAccountFee = 100_000
	// createNewAccountFeeInSystemContract is the fee a TransferContract to
	// a new account pays on top (1 TRX).
	createNewAccountFeeInSystemContract = 1_000_000
	// energyFee is getEnergyFee: sun per energy unit burned.
	energyFee = 100
	// memoFee is getMemoFee: sun burned for a transaction with a memo (data).
	memoFee = 1_000_000
	// maxFeeLimit is getMaxFeeLimit (15,000 TRX).
	maxFeeLimit = 15_000_000_000
	// maxResultSizeInTx is Constant.MAX_RESULT_SIZE_IN_TX, added to every
	// transaction's bandwidth bytes.
	maxResultSizeInTx = 64
	// windowSlots is the 24-hour resource window in 3-second slots.
	windowSlots = 28_800
	// expirationMs is trxExpirationTimeInMilliseconds (60 s), the
	// expiration createtransaction gives a transaction after the head block.
	expirationMs = 60_000
	// maxExpirationMs is MAXIMUM_TIME_UNTIL_EXPIRATION (24 h).
	maxExpirationMs = 24 * 3600 * 1000
	// blockIntervalMs is the 3-second slot.
	blockIntervalMs = 3000
	// totalSignNum is getTotalSignNum: at most 5 signatures.
	totalSignNum = 5
)

// Energy a TRC-20 transfer costs on mainnet (TransactionInfo of
// 0af79242…, testdata): 14631 when the recipient already holds the token,
// 15000 more for the storage slot of a new holder. A call that reverts
// costs the opcodes run before the REVERT.
const (
	energyTransfer          = 14_631
	energyTransferNewHolder = 29_631
	energyRevert            = 1_433
	energyBalanceOf         = 935
)

// accountState is one account (protocol.Account, the fields a payment uses).
type accountState struct {
	balance      int64 // sun
	created      int64 // create_time, ms
	lastOp       int64 // latest_opration_time, ms
	freeNetUsage int64 // bytes, decaying over windowSlots
	freeNetSlot  int64 // head slot of the last free-net use
	freeNetTime  int64 // latest_consume_free_time, ms
}

// tokenState is a simulated TRC-20 contract: balances and metadata, not
// bytecode.
type tokenState struct {
	name, symbol string
	decimals     int
	supply       *big.Int
	holders      map[string]*big.Int // 21-byte account -> units
	origin       []byte              // the deployer (origin_address)
}

// txEffects is what an accepted wallet transaction changed, so that the
// solidity API can see the state below it and a reorg can undo it.
type txEffects struct {
	trx     map[string]int64               // account -> sun delta
	created []string                       // accounts it created
	tokens  map[string]map[string]*big.Int // contract -> holder -> delta
}

// walletState is every account and token of the node.
type walletState struct {
	accounts map[string]*accountState
	tokens   map[string]*tokenState
	effects  map[string]*txEffects // txID -> effects of an accepted transaction
}

// walletLocked returns the node's accounts, creating them on first use.
func (n *Node) walletLocked() *walletState {
	if n.w == nil {
		n.w = &walletState{accounts: map[string]*accountState{}, tokens: map[string]*tokenState{}, effects: map[string]*txEffects{}}
	}
	return n.w
}

// Fund credits sun to account (20 bytes, or 21 with the 41 prefix),
// creating it, as the genesis block of a private chain does: no
// transaction, visible at every height. It is the sandbox's faucet.
func (n *Node) Fund(account []byte, sun int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	w := n.walletLocked()
	key := string(wire(account))
	a := w.accounts[key]
	if a == nil {
		a = &accountState{created: genesisTime, lastOp: genesisTime}
		w.accounts[key] = a
	}
	a.balance += sun
}

// AddTRC20 makes contract (20 or 21 bytes) a TRC-20 token the node
// executes: transfer(address,uint256) moves balances and logs Transfer;
// balanceOf, decimals, symbol, name and totalSupply answer constant calls;
// getcontract returns its ABI. Calls of other functions revert. A contract
// added twice keeps its balances.
func (n *Node) AddTRC20(contract []byte, name, symbol string, decimals int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	w := n.walletLocked()
	key := string(wire(contract))
	if w.tokens[key] != nil {
		return
	}
	origin := sha256.Sum256([]byte("tronfake token deployer " + symbol))
	w.tokens[key] = &tokenState{name: name, symbol: symbol, decimals: decimals, supply: new(big.Int),
		holders: map[string]*big.Int{}, origin: wire(origin[:20])}
}

// MintTRC20 credits units of a token added with AddTRC20 to holder, as
// genesis state (no transaction). It fails for an unknown contract.
func (n *Node) MintTRC20(contract, holder []byte, units *big.Int) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	t := n.walletLocked().tokens[string(wire(contract))]
	if t == nil {
		return fmt.Errorf("tronfake: %x is not a TRC-20 contract of this node (AddTRC20 first)", contract)
	}
	t.credit(string(wire(holder)), units)
	t.supply.Add(t.supply, units)
	return nil
}

// Balance returns the TRX balance in sun of account at the head, including
// accepted transactions not yet in a block (what /wallet/getaccount shows).
func (n *Node) Balance(account []byte) int64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	if a := n.walletLocked().accounts[string(wire(account))]; a != nil {
		return a.balance
	}
	return 0
}

// TokenBalance returns holder's units of a TRC-20 contract at the head.
func (n *Node) TokenBalance(contract, holder []byte) *big.Int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if t := n.walletLocked().tokens[string(wire(contract))]; t != nil {
		return t.balance(string(wire(holder)))
	}
	return new(big.Int)
}

func (t *tokenState) balance(holder string) *big.Int {
	if b := t.holders[holder]; b != nil {
		return new(big.Int).Set(b)
	}
	return new(big.Int)
}

func (t *tokenState) credit(holder string, units *big.Int) {
	b := t.holders[holder]
	if b == nil {
		b = new(big.Int)
		t.holders[holder] = b
	}
	b.Add(b, units)
}

// viewLocked is a reading of the state: at the head (pending included) or,
// for /walletsolidity, at the solidified block.
type viewLocked struct {
	n     *Node
	above map[string]bool // txIDs whose effects the view leaves out
}

func (n *Node) viewAt(solid bool) viewLocked {
	v := viewLocked{n: n, above: map[string]bool{}}
	if !solid {
		return v
	}
	limit := n.solidLocked()
	for i := len(n.heights) - 1; i >= 0 && n.heights[i] > limit; i-- {
		for id := range n.blocks[n.heights[i]].txs {
			v.above[id] = true
		}
	}
	for _, p := range n.pending {
		v.above[p.id] = true
	}
	return v
}

// account returns the account as the view sees it (nil when it does not
// exist there) and its balance.
func (v viewLocked) account(key string) (*accountState, int64) {
	w := v.n.walletLocked()
	a := w.accounts[key]
	if a == nil {
		return nil, 0
	}
	bal := a.balance
	for id := range v.above {
		e := w.effects[id]
		if e == nil {
			continue
		}
		bal -= e.trx[key]
		for _, c := range e.created {
			if c == key {
				return nil, 0
			}
		}
	}
	return a, bal
}

func (v viewLocked) tokenBalance(contract, holder string) *big.Int {
	w := v.n.walletLocked()
	t := w.tokens[contract]
	if t == nil {
		return new(big.Int)
	}
	bal := t.balance(holder)
	for id := range v.above {
		if e := w.effects[id]; e != nil {
			if d := e.tokens[contract][holder]; d != nil {
				bal.Sub(bal, d)
			}
		}
	}
	return bal
}

// undoWalletLocked reverts the accepted transactions of a block a reorg
// removes; they are gone, as the fake's other payments are.
func (n *Node) undoWalletLocked(b *block) {
	if n.w == nil || b == nil {
		return
	}
	for id := range b.txs {
		e := n.w.effects[id]
		if e == nil {
			continue
		}
		for k, d := range e.trx {
			if a := n.w.accounts[k]; a != nil {
				a.balance -= d
			}
		}
		for c, hs := range e.tokens {
			for h, d := range hs {
				if t := n.w.tokens[c]; t != nil {
					t.credit(h, new(big.Int).Neg(d))
				}
			}
		}
		for _, k := range e.created {
			delete(n.w.accounts, k)
		}
		delete(n.w.effects, id)
	}
}

// The answers of broadcasttransaction and broadcasthex
// (GrpcAPI.Return.response_code), with Wallet.broadcastTransaction's
// messages.
const (
	codeSigError        = "SIGERROR"
	codeContractValid   = "CONTRACT_VALIDATE_ERROR"
	codeBandwidth       = "BANDWITH_ERROR"
	codeDup             = "DUP_TRANSACTION_ERROR"
	codeTapos           = "TAPOS_ERROR"
	codeTooBig          = "TOO_BIG_TRANSACTION_ERROR"
	codeExpiration      = "TRANSACTION_EXPIRATION_ERROR"
	codeOther           = "OTHER_ERROR"
	contractValidPrefix = "Contract validate error : "
)

// rejection is a broadcast refused with a response code and message.
type rejection struct {
	code, message string
}

func (r *rejection) Error() string { return r.code + ": " + r.message }

func reject(code, msg string) *rejection { return &rejection{code: code, message: msg} }

// contractInvalid is a ContractValidateException.
func contractInvalid(format string, args ...any) *rejection {
	return reject(codeContractValid, contractValidPrefix+fmt.Sprintf(format, args...))
}

// signedTx is a transaction handed to broadcast.
type signedTx struct {
	raw      *rawData
	rawBytes []byte // what the txID hashes
	sigs     [][]byte
	id       string
}

func newSignedTx(raw *rawData, rawBytes []byte, sigs [][]byte) *signedTx {
	if rawBytes == nil {
		rawBytes = raw.marshal()
	}
	sum := sha256.Sum256(rawBytes)
	return &signedTx{raw: raw, rawBytes: rawBytes, sigs: sigs, id: hex.EncodeToString(sum[:])}
}

// size is the bandwidth bytes: the transaction without ret plus
// MAX_RESULT_SIZE_IN_TX per contract.
func (t *signedTx) size() int64 {
	return int64(len(marshalTx(t.rawBytes, t.sigs))) + maxResultSizeInTx*int64(len(t.raw.contracts))
}

// owner is the contract's owner_address.
func contractOwner(c txContract) []byte {
	switch c.ctype {
	case ctTransfer:
		v, _ := unmarshalTransfer(c.value)
		return v.owner
	case ctTrigger:
		v, _ := unmarshalTrigger(c.value)
		return v.owner
	}
	return nil
}

// encode58 is StringUtil.encode58Check.
func encode58(addr []byte) string {
	if len(addr) == 21 {
		return base58.CheckEncode(addr[1:], addr[0])
	}
	return hex.EncodeToString(addr)
}

// recoverSigner is SignUtils.signatureToAddress: r ‖ s ‖ v over the txID,
// v 0/1 or 27/28 (31..34 for compressed keys), to the 41-prefixed address.
func recoverSigner(hash, sig []byte) ([]byte, error) {
	v := int(sig[64])
	if v < 27 {
		v += 27
	}
	if v < 27 || v > 34 {
		return nil, fmt.Errorf("Header byte out of range: %d", v)
	}
	compact := make([]byte, 65)
	compact[0] = byte(v)
	copy(compact[1:], sig[:64])
	pub, _, err := ecdsa.RecoverCompact(compact, hash)
	if err != nil {
		return nil, errors.New("Could not recover public key from signature")
	}
	h := keccak.NewLegacyKeccak256()
	h.Write(pub.SerializeUncompressed()[1:])
	return append([]byte{0x41}, h.Sum(nil)[12:]...), nil
}

// checkSignatures is TransactionCapsule.validatePubSignature for an owner
// permission of one key (every account here): each signature must come from
// the owner, once.
func checkSignatures(t *signedTx) *rejection {
	if len(t.sigs) == 0 || len(t.raw.contracts) == 0 {
		return reject(codeSigError, "Validate signature error: miss sig or contract")
	}
	if len(t.sigs) > totalSignNum {
		return reject(codeSigError, "Validate signature error: too many signatures")
	}
	c := t.raw.contracts[0]
	if c.permissionID != 0 && c.permissionID != 2 {
		return reject(codeSigError, "Validate signature error: permission isn't exit")
	}
	owner := contractOwner(c)
	if len(t.sigs) > 1 {
		return reject(codeSigError, fmt.Sprintf("Validate signature error: Signature count is %d more than key counts of permission : 1", len(t.sigs)))
	}
	hash, _ := hex.DecodeString(t.id)
	sig := t.sigs[0]
	if len(sig) < 65 {
		return reject(codeSigError, fmt.Sprintf("Validate signature error: Signature size is %d", len(sig)))
	}
	signer, err := recoverSigner(hash, sig)
	if err != nil {
		return reject(codeSigError, "Validate signature error: "+err.Error())
	}
	if string(signer) != string(owner) {
		return reject(codeSigError, fmt.Sprintf("Validate signature error: %s is signed by %s but it is not contained of permission.",
			hex.EncodeToString(sig), encode58(signer)))
	}
	return nil
}

// taposLocked is Manager.validateTapos: ref_block_bytes names the newest
// block whose number ends in those two bytes, and ref_block_hash must be
// bytes 8..16 of its id.
func (n *Node) taposLocked(r *rawData) *rejection {
	for i := len(n.heights) - 1; i >= 0 && n.heights[len(n.heights)-1]-n.heights[i] < 65536; i-- {
		b := n.blocks[n.heights[i]]
		id, _ := hex.DecodeString(b.id)
		if string(id[6:8]) != string(r.refBlockBytes) {
			continue
		}
		if string(id[8:16]) == string(r.refBlockHash) {
			return nil
		}
		return reject(codeTapos, "Tapos check error.")
	}
	return reject(codeTapos, "Tapos check error.")
}

// feeBill is what a transaction pays in resources.
type feeBill struct {
	netUsage  int64 // free bandwidth bytes used
	netFee    int64 // sun burned for bandwidth (or the account-creation fee)
	energy    int64
	energyFee int64
	extraFee  int64 // the system contract's fee for a new account, the memo fee
}

func (f feeBill) total() int64 { return f.netFee + f.energyFee + f.extraFee }

// decayedFreeNet is the free bandwidth still counted at slot now.
func (a *accountState) decayedFreeNet(now int64) int64 {
	d := now - a.freeNetSlot
	if d >= windowSlots || d < 0 {
		return 0
	}
	return a.freeNetUsage * (windowSlots - d) / windowSlots
}

// broadcastLocked is Wallet.broadcastTransaction and Manager.pushTransaction
// for the two contract types the node executes: it checks the transaction
// in java-tron's order, applies it and queues it for the next block.
func (n *Node) broadcastLocked(t *signedTx, skipped []string) *rejection {
	if len(skipped) > 0 && len(t.raw.contracts) == 0 {
		return reject(codeOther, "Error: tronfake executes TransferContract and TriggerSmartContract only, not "+strings.Join(skipped, ", "))
	}
	if len(t.raw.contracts) == 0 {
		return reject(codeContractValid, contractValidPrefix+"No contract!")
	}
	head := n.blocks[n.tipLocked()]
	if t.raw.expiration < head.timestamp+blockIntervalMs {
		return reject(codeExpiration, "Transaction expired")
	}
	if rej := checkSignatures(t); rej != nil {
		return rej
	}
	if len(t.raw.contracts) != 1 {
		return contractInvalid("tx %s contract size should be exactly 1, this is extend feature ,actual :%d", t.id, len(t.raw.contracts))
	}
	if rej := n.taposLocked(t.raw); rej != nil {
		return rej
	}
	if t.raw.expiration <= head.timestamp || t.raw.expiration > head.timestamp+maxExpirationMs {
		return reject(codeExpiration, "Transaction expired")
	}
	if n.seenLocked(t.id) {
		return reject(codeDup, "Dup transaction.")
	}
	return n.executeLocked(t)
}

// seenLocked reports whether txID is already on the chain or pending.
func (n *Node) seenLocked(id string) bool {
	if n.w != nil && n.w.effects[id] != nil {
		return true
	}
	for _, p := range n.pending {
		if p.id == id {
			return true
		}
	}
	for _, b := range n.blocks {
		if b.txs[id] != nil {
			return true
		}
	}
	return false
}

// executeLocked consumes bandwidth, runs the contract, and on success
// commits the changes, records them and queues the transaction.
func (n *Node) executeLocked(t *signedTx) *rejection {
	w := n.walletLocked()
	c := t.raw.contracts[0]
	ownerKey := string(contractOwner(c))
	owner := w.accounts[ownerKey]
	if owner == nil {
		return contractInvalid("account [%s] does not exist", encode58([]byte(ownerKey)))
	}
	head := n.blocks[n.tipLocked()]
	slot := int64(head.number)
	eff := &txEffects{trx: map[string]int64{}, tokens: map[string]map[string]*big.Int{}}
	bill := feeBill{}
	balance := owner.balance
	bytesSize := t.size()

	// Bandwidth (BandwidthProcessor.consume).
	createsAccount := false
	var transfer transferValue
	if c.ctype == ctTransfer {
		transfer, _ = unmarshalTransfer(c.value)
		createsAccount = w.accounts[string(transfer.to)] == nil
	}
	freeNet := owner.decayedFreeNet(slot)
	useFree := false
	switch {
	case createsAccount:
		if balance < createAccountFee {
			return reject(codeBandwidth, "Account resource insufficient error.")
		}
		bill.netFee = createAccountFee
	case freeNet+bytesSize <= freeNetLimit:
		bill.netUsage = bytesSize
		useFree = true
	default:
		fee := bytesSize * transactionFee
		if balance < fee {
			return reject(codeBandwidth, "Account resource insufficient error.")
		}
		bill.netFee = fee
	}
	balance -= bill.netFee
	if len(t.raw.data) > 0 {
		if balance < memoFee {
			return reject(codeBandwidth, "Account resource insufficient error.")
		}
		bill.extraFee += memoFee
		balance -= memoFee
	}

	p := &pendingTx{id: t.id}
	ret := map[string]any{"contractRet": "SUCCESS"}
	info := map[string]any{"id": t.id, "contractResult": []string{""}}
	switch c.ctype {
	case ctTransfer:
		if rej := validateTransfer(w, transfer, balance); rej != nil {
			return rej
		}
		fee := int64(0)
		if createsAccount {
			fee = createNewAccountFeeInSystemContract
			ret["fee"] = fee
		}
		bill.extraFee += fee
		balance -= transfer.amount + fee
		to := string(transfer.to)
		if createsAccount {
			w.accounts[to] = &accountState{created: head.timestamp, lastOp: head.timestamp}
			eff.created = append(eff.created, to)
		}
		w.accounts[to].balance += transfer.amount
		eff.trx[to] += transfer.amount
	case ctTrigger:
		v, _ := unmarshalTrigger(c.value)
		tok := w.tokens[string(v.contract)]
		if tok == nil {
			return contractInvalid("No contract or not a smart contract")
		}
		if t.raw.feeLimit < 0 || t.raw.feeLimit > maxFeeLimit {
			return contractInvalid("feeLimit must be >= 0 and <= %d", maxFeeLimit)
		}
		if v.callValue < 0 {
			return contractInvalid("callValue must be >= 0")
		}
		if v.callValue > 0 || v.callTokenValue > 0 {
			// The simulated tokens are not payable.
			if v.callValue > balance {
				return contractInvalid("Validate InternalTransfer error, balance is not sufficient.")
			}
		}
		res := tok.call(string(v.contract), ownerKey, v.data, tok.balance)
		energyLimit := min(t.raw.feeLimit, balance) / energyFee
		switch {
		case res.energy > energyLimit:
			bill.energy = energyLimit
			ret["contractRet"] = "OUT_OF_ENERGY"
			info["result"] = "FAILED"
			info["resMessage"] = hex.EncodeToString([]byte(fmt.Sprintf(
				"Not enough energy for 'SSTORE' operation executing: curInvokeEnergyLimit[%d], curOpEnergy[20000], usedEnergy[%d]", energyLimit, max(energyLimit-5000, 0))))
		case res.revert:
			bill.energy = res.energy
			ret["contractRet"] = "REVERT"
			info["result"] = "FAILED"
			info["resMessage"] = hex.EncodeToString([]byte("REVERT opcode executed"))
		default:
			bill.energy = res.energy
			for h, d := range res.deltas {
				tok.credit(h, d)
			}
			eff.tokens[string(v.contract)] = res.deltas
			info["contractResult"] = []string{hex.EncodeToString(res.out)}
			if len(res.logs) > 0 {
				info["log"] = res.logs
			}
		}
		bill.energyFee = bill.energy * energyFee
		balance -= bill.energyFee
		info["contract_address"] = hex.EncodeToString(v.contract)
		receipt := map[string]any{"energy_usage_total": bill.energy, "result": ret["contractRet"]}
		if bill.energyFee > 0 {
			receipt["energy_fee"] = bill.energyFee
		}
		info["receipt"] = receipt
	}
	// Commit.
	eff.trx[ownerKey] += balance - owner.balance
	owner.balance = balance
	owner.lastOp = head.timestamp
	if useFree {
		owner.freeNetUsage = freeNet + bytesSize
		owner.freeNetSlot = slot
		owner.freeNetTime = head.timestamp
	}
	receipt, _ := info["receipt"].(map[string]any)
	if receipt == nil {
		receipt = map[string]any{}
		info["receipt"] = receipt
	}
	if bill.netUsage > 0 {
		receipt["net_usage"] = bill.netUsage
	}
	if bill.netFee > 0 {
		receipt["net_fee"] = bill.netFee
	}
	if bill.total() > 0 {
		info["fee"] = bill.total()
	}
	w.effects[t.id] = eff
	raw, err := t.raw.json()
	if err != nil {
		return reject(codeOther, "Error: "+err.Error())
	}
	sigs := make([]string, len(t.sigs))
	for i, s := range t.sigs {
		sigs[i] = hex.EncodeToString(s)
	}
	p.tx = map[string]any{
		"raw_data":     raw,
		"raw_data_hex": hex.EncodeToString(t.rawBytes),
		"ret":          []map[string]any{ret},
		"signature":    sigs,
		"txID":         t.id,
	}
	p.info = info
	n.pending = append(n.pending, p)
	return nil
}

// validateTransfer is TransferActuator.validate with the owner's balance
// after bandwidth.
func validateTransfer(w *walletState, v transferValue, balance int64) *rejection {
	valid := func(a []byte) bool { return len(a) == 21 && a[0] == 0x41 }
	if !valid(v.owner) {
		return contractInvalid("Invalid ownerAddress!")
	}
	if !valid(v.to) {
		return contractInvalid("Invalid toAddress!")
	}
	if string(v.to) == string(v.owner) {
		return contractInvalid("Cannot transfer TRX to yourself.")
	}
	if w.accounts[string(v.owner)] == nil {
		return contractInvalid("Validate TransferContract error, no OwnerAccount.")
	}
	if v.amount <= 0 {
		return contractInvalid("Amount must be greater than 0.")
	}
	fee := int64(0)
	if w.accounts[string(v.to)] == nil {
		fee = createNewAccountFeeInSystemContract
	}
	if w.tokens[string(v.to)] != nil {
		return contractInvalid("Cannot transfer TRX to a smartContract.")
	}
	if balance < v.amount+fee {
		return contractInvalid("Validate TransferContract error, balance is not sufficient.")
	}
	return nil
}

// Function selectors of the simulated TRC-20 contracts.
var (
	selTransfer    = selector("transfer(address,uint256)")
	selBalanceOf   = selector("balanceOf(address)")
	selDecimals    = selector("decimals()")
	selSymbol      = selector("symbol()")
	selName        = selector("name()")
	selTotalSupply = selector("totalSupply()")
)

// selector is the first four bytes of keccak256 of a function signature
// (Util.parseMethod).
func selector(sig string) string {
	h := keccak.NewLegacyKeccak256()
	h.Write([]byte(sig))
	return hex.EncodeToString(h.Sum(nil)[:4])
}

// callResult is what a simulated contract call did.
type callResult struct {
	out    []byte
	revert bool
	energy int64
	deltas map[string]*big.Int // holder -> units
	logs   []map[string]any
}

// constant reports whether the function a call data names is a view.
func constant(data []byte) bool {
	if len(data) < 4 {
		return false
	}
	switch hex.EncodeToString(data[:4]) {
	case selBalanceOf, selDecimals, selSymbol, selName, selTotalSupply:
		return true
	}
	return false
}

func word(b []byte) []byte { return append(make([]byte, 32-len(b)), b...) }

// abiString encodes a Solidity string return value.
func abiString(s string) []byte {
	out := word([]byte{32})
	out = append(out, word(big.NewInt(int64(len(s))).Bytes())...)
	pad := (len(s) + 31) / 32 * 32
	return append(out, append([]byte(s), make([]byte, pad-len(s))...)...)
}

// call runs data against the token as caller (a 21-byte account), reading
// holders' balances through balance (the head or a solidified view). It
// never changes the token: the caller applies the deltas. Mainnet USDT's
// transfer returns false (32 zero bytes) even when it succeeds, and so does
// this one.
func (t *tokenState) call(contract, caller string, data []byte, balance func(holder string) *big.Int) callResult {
	if len(data) < 4 {
		return callResult{revert: true, energy: energyRevert}
	}
	args := data[4:]
	switch hex.EncodeToString(data[:4]) {
	case selBalanceOf:
		if len(args) < 32 {
			return callResult{revert: true, energy: energyRevert}
		}
		holder := string(append([]byte{0x41}, args[12:32]...))
		return callResult{out: word(balance(holder).Bytes()), energy: energyBalanceOf}
	case selDecimals:
		return callResult{out: word([]byte{byte(t.decimals)}), energy: energyBalanceOf}
	case selSymbol:
		return callResult{out: abiString(t.symbol), energy: energyBalanceOf}
	case selName:
		return callResult{out: abiString(t.name), energy: energyBalanceOf}
	case selTotalSupply:
		return callResult{out: word(t.supply.Bytes()), energy: energyBalanceOf}
	case selTransfer:
		if len(args) < 64 {
			return callResult{revert: true, energy: energyRevert}
		}
		to := string(append([]byte{0x41}, args[12:32]...))
		amount := new(big.Int).SetBytes(args[32:64])
		have := balance(caller)
		if have.Cmp(amount) < 0 || to == "\x41"+strings.Repeat("\x00", 20) {
			return callResult{revert: true, energy: energyRevert}
		}
		energy := int64(energyTransfer)
		if balance(to).Sign() == 0 && to != caller {
			energy = energyTransferNewHolder
		}
		deltas := map[string]*big.Int{caller: new(big.Int).Neg(amount)}
		if d := deltas[to]; d != nil {
			d.Add(d, amount)
		} else {
			deltas[to] = new(big.Int).Set(amount)
		}
		log := map[string]any{
			"address": hex.EncodeToString([]byte(contract)[1:]),
			"data":    hex.EncodeToString(word(amount.Bytes())),
			"topics": []string{
				"ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
				hex.EncodeToString(word([]byte(caller)[1:])),
				hex.EncodeToString(word([]byte(to)[1:])),
			},
		}
		return callResult{out: word(nil), energy: energy, deltas: deltas, logs: []map[string]any{log}}
	}
	return callResult{revert: true, energy: energyRevert}
}

// abiJSON is the token's ABI as getcontract prints it (SmartContract.ABI).
func (t *tokenState) abiJSON() map[string]any {
	fn := func(name string, inputs []map[string]any, out string, view bool) map[string]any {
		e := map[string]any{"name": name, "outputs": []map[string]any{{"type": out}}, "type": "Function"}
		if len(inputs) > 0 {
			e["inputs"] = inputs
		}
		if view {
			e["constant"] = true
			e["stateMutability"] = "View"
		} else {
			e["stateMutability"] = "Nonpayable"
		}
		return e
	}
	in := func(pairs ...string) []map[string]any {
		var out []map[string]any
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, map[string]any{"name": pairs[i], "type": pairs[i+1]})
		}
		return out
	}
	entries := []map[string]any{
		fn("name", nil, "string", true),
		fn("symbol", nil, "string", true),
		fn("decimals", nil, "uint8", true),
		fn("totalSupply", nil, "uint256", true),
		fn("balanceOf", in("who", "address"), "uint256", true),
		fn("transfer", in("_to", "address", "_value", "uint256"), "bool", false),
		{"anonymous": false, "inputs": []map[string]any{
			{"indexed": true, "name": "from", "type": "address"},
			{"indexed": true, "name": "to", "type": "address"},
			{"name": "value", "type": "uint256"},
		}, "name": "Transfer", "type": "Event"},
	}
	return map[string]any{"entrys": entries}
}
