package solanafake

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/mr-tron/base58"
)

// The runtime of the simulated cluster: what a wallet's transaction does.
// It executes the System program's Transfer and CreateAccount, the Compute
// Budget program, spl-token's Transfer and TransferChecked, the Associated
// Token Account program's Create and CreateIdempotent (with the token
// program and System program instructions it invokes, recorded as inner
// instructions), and spl-memo; the checks and errors are agave's and the
// programs' (solana-sdk TransactionError, InstructionError; spl-token's
// TokenError codes and "Error: …" logs). Compute units are typical figures
// of those programs, not measured here.

// Fee and compute-budget figures of mainnet.
const (
	lamportsPerSignature = 5000
	// maxProcessingAge is MAX_PROCESSING_AGE: a blockhash is usable for 150 blocks.
	maxProcessingAge = 150
	// defaultInstructionLimit and builtinInstructionLimit are the compute
	// units an instruction gets without SetComputeUnitLimit.
	defaultInstructionLimit = 200_000
	builtinInstructionLimit = 3_000
	maxComputeUnitLimit     = 1_400_000
)

// Compute units the programs use (typical mainnet figures).
const (
	cuSystem           = 150
	cuComputeBudget    = 150
	cuTokenTransfer    = 4_644
	cuTokenChecked     = 6_200
	cuGetDataSize      = 1_569
	cuImmutableOwner   = 1_405
	cuInitAccount3     = 4_188
	cuATA              = 14_731 // the ATA program's own work for Create
	cuATAIdempotentHit = 4_516  // CreateIdempotent on an existing account
	cuMemoPerByte      = 60
	cuMemoBase         = 5_000
)

// builtins are the programs whose instructions get builtinInstructionLimit
// and whose logs have no "consumed" line.
var builtins = map[string]bool{SystemProgram: true, ComputeBudgetProgram: true}

// txError is a TransactionError: its serde JSON and its Display text.
type txError struct {
	json any
	text string
}

func simpleError(name, text string) *txError { return &txError{json: name, text: text} }

var (
	errBlockhashNotFound   = simpleError("BlockhashNotFound", "Blockhash not found")
	errAlreadyProcessed    = simpleError("AlreadyProcessed", "This transaction has already been processed")
	errAccountNotFound     = simpleError("AccountNotFound", "Attempt to debit an account but found no record of a prior credit.")
	errInsufficientFee     = simpleError("InsufficientFundsForFee", "Insufficient funds for fee")
	errInvalidAccountFee   = simpleError("InvalidAccountForFee", "This account may not be used to pay transaction fees")
	errProgramNotFound     = simpleError("ProgramAccountNotFound", "Attempt to load a program that does not exist")
	errInvalidProgram      = simpleError("InvalidProgramForExecution", "This program may not be used for executing instructions")
	errLookupTableNotFound = simpleError("AddressLookupTableNotFound", "Transaction loads an address table account that doesn't exist")
	errSignatureFailure    = simpleError("SignatureFailure", "Transaction did not pass signature verification")
)

func rentError(index int) *txError {
	return &txError{json: map[string]any{"InsufficientFundsForRent": map[string]int{"account_index": index}},
		text: fmt.Sprintf("Transaction results in an account (%d) with insufficient funds for rent", index)}
}

func duplicateInstruction(index int) *txError {
	return &txError{json: map[string]any{"DuplicateInstruction": index},
		text: fmt.Sprintf("Transaction contains a duplicate instruction (%d) that is not allowed", index)}
}

// instrError is an InstructionError: serde JSON and Display.
type instrError struct {
	json any
	text string
}

func custom(code uint32) *instrError {
	return &instrError{json: map[string]uint32{"Custom": code}, text: fmt.Sprintf("custom program error: %#x", code)}
}

var (
	ieInvalidArgument   = &instrError{"InvalidArgument", "invalid program argument"}
	ieInvalidData       = &instrError{"InvalidInstructionData", "invalid instruction data"}
	ieInvalidAccount    = &instrError{"InvalidAccountData", "invalid account data for instruction"}
	ieMissingSignature  = &instrError{"MissingRequiredSignature", "missing required signature for instruction"}
	ieReadonlyLamports  = &instrError{"ReadonlyLamportChange", "instruction changed the balance of a read-only account"}
	ieReadonlyData      = &instrError{"ReadonlyDataModified", "instruction modified data of a read-only account"}
	ieMissingAccount    = &instrError{"MissingAccount", "An account required by the instruction is missing"}
	ieInvalidSeeds      = &instrError{"InvalidSeeds", "Provided seeds do not result in a valid address"}
	ieIllegalOwner      = &instrError{"IllegalOwner", "Provided owner is not allowed"}
	ieIncorrectProgram  = &instrError{"IncorrectProgramId", "incorrect program id for instruction"}
	ieBudgetExceeded    = &instrError{"ComputationalBudgetExceeded", "Computational budget exceeded"}
	ieInvalidOwner      = &instrError{"InvalidAccountOwner", "Invalid account owner"}
	ieUnsupportedByFake = &instrError{"InvalidInstructionData", "invalid instruction data"}
)

func instructionError(index int, e *instrError) *txError {
	return &txError{json: map[string]any{"InstructionError": []any{index, e.json}},
		text: fmt.Sprintf("Error processing Instruction %d: %s", index, e.text)}
}

// acctState is an account in a transaction's working set.
type acctState struct {
	lamports uint64
	owner    string
	data     []byte
}

// innerIx is an instruction a program invoked (CPI), by account index.
type innerIx struct {
	program  int
	accounts []int
	data     []byte
}

// execResult is what processing a transaction gave.
type execResult struct {
	err *txError
	// committed: the transaction goes into a block (it may still have
	// failed: then only its fee is charged). A check or load failure
	// (blockhash, fee payer, programs) is not committed.
	committed bool
	fee       uint64
	logs      []string
	units     uint64
	inner     map[int][]innerIx
	pre, post []uint64
	preTok    []map[string]any
	postTok   []map[string]any
	writes    map[string]*acctState // what a committed transaction leaves
}

// blockhashHeightLocked finds a recent block by hash: its height, within
// the last maxProcessingAge+150 blocks on the newest block's fork.
func (n *Node) blockhashHeightLocked(hash string) (uint64, bool) {
	b := n.last
	for i := 0; b != nil && i <= 2*maxProcessingAge; i++ {
		if b.hash == hash {
			return b.height, true
		}
		if b.slot == 0 {
			break
		}
		b = n.blocks[b.parentSlot]
	}
	return 0, false
}

// blockhashValidLocked is is_hash_valid_for_age(hash, MAX_PROCESSING_AGE).
func (n *Node) blockhashValidLocked(hash string) bool {
	h, ok := n.blockhashHeightLocked(hash)
	return ok && n.last.height-h <= maxProcessingAge
}

// budget is what the Compute Budget instructions asked for.
type budget struct {
	limit, price uint64
}

// computeBudget reads the Compute Budget instructions
// (process_compute_budget_instructions).
func (t *wireTx) computeBudget() (budget, *txError) {
	var b budget
	var limitSet, priceSet, heapSet, sizeSet bool
	nonBuiltin, builtin := 0, 0
	for i, in := range t.instrs {
		prog := t.keys[in.program]
		if prog != ComputeBudgetProgram {
			if builtins[prog] {
				builtin++
			} else {
				nonBuiltin++
			}
			continue
		}
		builtin++
		d := in.data
		bad := func() *txError { return instructionError(i, ieInvalidData) }
		if len(d) == 0 {
			return b, bad()
		}
		switch d[0] {
		case 1: // RequestHeapFrame(u32)
			if len(d) != 5 {
				return b, bad()
			}
			if heapSet {
				return b, duplicateInstruction(i)
			}
			heapSet = true
		case 2: // SetComputeUnitLimit(u32)
			if len(d) != 5 {
				return b, bad()
			}
			if limitSet {
				return b, duplicateInstruction(i)
			}
			limitSet = true
			b.limit = uint64(binary.LittleEndian.Uint32(d[1:]))
		case 3: // SetComputeUnitPrice(u64)
			if len(d) != 9 {
				return b, bad()
			}
			if priceSet {
				return b, duplicateInstruction(i)
			}
			priceSet = true
			b.price = binary.LittleEndian.Uint64(d[1:])
		case 4: // SetLoadedAccountsDataSizeLimit(u32)
			if len(d) != 5 {
				return b, bad()
			}
			if sizeSet {
				return b, duplicateInstruction(i)
			}
			sizeSet = true
		default:
			return b, bad()
		}
	}
	if !limitSet {
		b.limit = uint64(nonBuiltin*defaultInstructionLimit + builtin*builtinInstructionLimit)
	}
	b.limit = min(b.limit, maxComputeUnitLimit)
	return b, nil
}

// fee is the transaction fee: 5000 lamports per signature plus the
// prioritization fee, ceil(price × limit / 1,000,000).
func (b budget) fee(signatures int) uint64 {
	prio := (b.price*b.limit + 999_999) / 1_000_000
	return uint64(signatures)*lamportsPerSignature + prio
}

// workSet is the accounts of one transaction as it runs.
type workSet struct {
	n     *Node
	accts map[string]*acctState
}

func (w *workSet) get(key string) *acctState {
	if a := w.accts[key]; a != nil {
		return a
	}
	a := &acctState{lamports: w.n.balances[key], owner: w.n.ownerOf(key), data: append([]byte(nil), w.n.dataOf(key)...)}
	w.accts[key] = a
	return a
}

// snapshot copies the current states (to roll an instruction back).
func (w *workSet) snapshot() map[string]acctState {
	out := make(map[string]acctState, len(w.accts))
	for k, a := range w.accts {
		out[k] = acctState{lamports: a.lamports, owner: a.owner, data: append([]byte(nil), a.data...)}
	}
	return out
}

// tokenBalancesLocked lists the token accounts among keys in agave's
// UiTransactionTokenBalance shape.
func tokenBalances(keys []string, state func(string) *acctState, mints func(string) (mintState, bool)) []map[string]any {
	out := []map[string]any{}
	for i, k := range keys {
		a := state(k)
		if a == nil || a.owner != TokenProgram {
			continue
		}
		ta, ok := unpackTokenAccount(a.data)
		if !ok {
			continue
		}
		m, ok := mints(ta.mint)
		if !ok {
			continue
		}
		out = append(out, map[string]any{
			"accountIndex":  i,
			"mint":          ta.mint,
			"owner":         ta.owner,
			"programId":     TokenProgram,
			"uiTokenAmount": uiTokenAmount(ta.amount, m.decimals),
		})
	}
	return out
}

// processLocked runs t against the current state without changing it and
// returns what it would do (the preflight simulation and the block both
// use it; commitLocked applies it).
func (n *Node) processLocked(t *wireTx) *execResult {
	r := &execResult{inner: map[int][]innerIx{}}
	if !n.blockhashValidLocked(t.blockhash) {
		r.err = errBlockhashNotFound
		return r
	}
	if n.txs[t.signature()] != nil {
		r.err = errAlreadyProcessed
		return r
	}
	if len(t.lookups) > 0 {
		r.err = errLookupTableNotFound
		return r
	}
	b, berr := t.computeBudget()
	if berr != nil {
		r.err = berr
		return r
	}
	r.fee = b.fee(len(t.sigs))
	w := &workSet{n: n, accts: map[string]*acctState{}}
	payer := t.keys[0]
	pa := w.get(payer)
	switch {
	case pa.lamports == 0 && !n.exists(payer):
		r.err = errAccountNotFound
		return r
	case pa.owner != SystemProgram || len(pa.data) > 0:
		r.err = errInvalidAccountFee
		return r
	case pa.lamports < r.fee:
		r.err = errInsufficientFee
		return r
	}
	if after := pa.lamports - r.fee; after > 0 && after < rentExempt(0) && pa.lamports >= rentExempt(0) {
		r.err = rentError(0)
		return r
	}
	for _, in := range t.instrs {
		prog := t.keys[in.program]
		if _, ok := programs[prog]; !ok {
			if n.exists(prog) {
				r.err = errInvalidProgram
			} else {
				r.err = errProgramNotFound
			}
			return r
		}
	}
	r.committed = true
	keys := t.keys
	r.pre = make([]uint64, len(keys))
	for i, k := range keys {
		r.pre[i] = n.balances[k]
	}
	r.preTok = tokenBalances(keys, func(k string) *acctState {
		return &acctState{lamports: n.balances[k], owner: n.ownerOf(k), data: n.dataOf(k)}
	}, n.mintOf)
	pa.lamports -= r.fee
	feeOnly := w.snapshot()
	remaining := b.limit
	rt := &runtime{n: n, t: t, w: w, r: r}
	for i, in := range t.instrs {
		if ierr := rt.run(i, in, &remaining); ierr != nil {
			r.err = instructionError(i, ierr)
			break
		}
	}
	r.units = b.limit - remaining
	if r.err == nil {
		// Rent state transitions (check_rent_state): an account may not go
		// from nothing or rent-exempt to rent-paying.
		for i, k := range keys {
			a := w.accts[k]
			if a == nil || !t.isWritable(i) {
				continue
			}
			min := rentExempt(len(a.data))
			preBal, preLen := n.balances[k], len(n.dataOf(k))
			if a.lamports > 0 && a.lamports < min && (preBal == 0 || preBal >= rentExempt(preLen)) {
				r.err = rentError(i)
				break
			}
		}
	}
	if r.err != nil {
		w.accts = map[string]*acctState{}
		for k, a := range feeOnly {
			if k == payer {
				a := a
				w.accts[k] = &a
			}
		}
	}
	r.writes = w.accts
	state := func(k string) *acctState {
		if a := w.accts[k]; a != nil {
			return a
		}
		return &acctState{lamports: n.balances[k], owner: n.ownerOf(k), data: n.dataOf(k)}
	}
	r.post = make([]uint64, len(keys))
	for i, k := range keys {
		r.post[i] = state(k).lamports
	}
	r.postTok = tokenBalances(keys, state, func(m string) (mintState, bool) {
		return unpackMint(state(m).data)
	})
	return r
}

// commitLocked applies a committed result to the accounts.
func (n *Node) commitLocked(r *execResult) {
	for k, a := range r.writes {
		if _, ok := programs[k]; ok {
			continue
		}
		n.balances[k] = a.lamports
		if a.owner == SystemProgram && len(a.data) == 0 {
			delete(n.accounts, k)
		} else {
			n.setAccount(k, a.owner, a.data)
		}
	}
}

// runtime runs one transaction's instructions.
type runtime struct {
	n *Node
	t *wireTx
	w *workSet
	r *execResult
}

func (rt *runtime) log(format string, args ...any) {
	rt.r.logs = append(rt.r.logs, fmt.Sprintf(format, args...))
}

// key returns the account key at an instruction's account position.
func (rt *runtime) key(in wireInstr, pos int) (string, int, bool) {
	if pos >= len(in.accounts) {
		return "", 0, false
	}
	i := in.accounts[pos]
	return rt.t.keys[i], i, true
}

// run executes top-level instruction i, charging its compute units.
func (rt *runtime) run(i int, in wireInstr, remaining *uint64) *instrError {
	prog := rt.t.keys[in.program]
	before := rt.w.snapshot()
	budgetAtStart := *remaining
	rt.log("Program %s invoke [1]", prog)
	var used uint64
	var ierr *instrError
	switch prog {
	case SystemProgram:
		used = cuSystem
		ierr = rt.system(in, 1)
	case ComputeBudgetProgram:
		used = cuComputeBudget
	case TokenProgram:
		used, ierr = rt.token(in)
	case AssociatedTokenProgram:
		used, ierr = rt.ata(i, in, budgetAtStart)
	case MemoProgram:
		used, ierr = rt.memo(in)
	}
	if used > *remaining {
		used, ierr = *remaining, ieBudgetExceeded
	}
	*remaining -= used
	if !builtins[prog] {
		rt.log("Program %s consumed %d of %d compute units", prog, used, budgetAtStart)
	}
	if ierr != nil {
		rt.log("Program %s failed: %s", prog, ierr.text)
		for k, a := range before {
			a := a
			rt.w.accts[k] = &a
		}
		return ierr
	}
	rt.log("Program %s success", prog)
	return nil
}

// writable reports whether the transaction may change account index.
func (rt *runtime) writable(index int) bool { return rt.t.isWritable(index) }

// system runs a System program instruction (Transfer, CreateAccount).
func (rt *runtime) system(in wireInstr, depth int) *instrError {
	d := in.data
	if len(d) < 4 {
		return ieInvalidData
	}
	switch binary.LittleEndian.Uint32(d) {
	case 2: // Transfer { lamports }
		if len(d) < 12 {
			return ieInvalidData
		}
		lamports := binary.LittleEndian.Uint64(d[4:12])
		fromKey, fi, ok1 := rt.key(in, 0)
		toKey, ti, ok2 := rt.key(in, 1)
		if !ok1 || !ok2 {
			return ieMissingAccount
		}
		from := rt.w.get(fromKey)
		if !rt.t.isSigner(fi) {
			rt.log("Transfer: `from` account %s must sign", fromKey)
			return ieMissingSignature
		}
		if len(from.data) > 0 {
			rt.log("Transfer: `from` must not carry data")
			return ieInvalidArgument
		}
		if lamports > from.lamports {
			rt.log("Transfer: insufficient lamports %d, need %d", from.lamports, lamports)
			return custom(1)
		}
		if lamports > 0 && (!rt.writable(fi) || !rt.writable(ti)) {
			return ieReadonlyLamports
		}
		from.lamports -= lamports
		rt.w.get(toKey).lamports += lamports
		return nil
	case 0: // CreateAccount { lamports, space, owner }
		if len(d) < 52 {
			return ieInvalidData
		}
		lamports := binary.LittleEndian.Uint64(d[4:12])
		space := binary.LittleEndian.Uint64(d[12:20])
		owner := base58.Encode(d[20:52])
		fromKey, fi, ok1 := rt.key(in, 0)
		toKey, ti, ok2 := rt.key(in, 1)
		if !ok1 || !ok2 {
			return ieMissingAccount
		}
		to := rt.w.get(toKey)
		if to.lamports > 0 || len(to.data) > 0 || to.owner != SystemProgram {
			rt.log("Create Account: account Address { address: %s, base: None } already in use", toKey)
			return custom(0)
		}
		if !rt.t.isSigner(ti) && depth == 1 {
			rt.log("Create Account: account Address { address: %s, base: None } must sign", toKey)
			return ieMissingSignature
		}
		if !rt.t.isSigner(fi) {
			rt.log("Transfer: `from` account %s must sign", fromKey)
			return ieMissingSignature
		}
		from := rt.w.get(fromKey)
		if lamports > from.lamports {
			rt.log("Transfer: insufficient lamports %d, need %d", from.lamports, lamports)
			return custom(1)
		}
		if !rt.writable(fi) || !rt.writable(ti) {
			return ieReadonlyLamports
		}
		from.lamports -= lamports
		to.lamports += lamports
		to.data = make([]byte, space)
		to.owner = owner
		return nil
	}
	return ieUnsupportedByFake
}

// tokenFail prints a TokenError or ProgramError as spl-token does.
func (rt *runtime) tokenFail(e *instrError, msg string) *instrError {
	rt.log("Program log: Error: %s", msg)
	return e
}

// token runs a Token program instruction (Transfer, TransferChecked).
func (rt *runtime) token(in wireInstr) (uint64, *instrError) {
	d := in.data
	if len(d) == 0 {
		return 1_000, rt.tokenFail(ieInvalidData, "InvalidInstruction")
	}
	var amount uint64
	var checked bool
	var decimals uint8
	switch d[0] {
	case 3:
		if len(d) < 9 {
			return 1_000, rt.tokenFail(custom(12), "Invalid instruction")
		}
		amount = binary.LittleEndian.Uint64(d[1:9])
		rt.log("Program log: Instruction: Transfer")
	case 12:
		if len(d) < 10 {
			return 1_000, rt.tokenFail(custom(12), "Invalid instruction")
		}
		amount, checked, decimals = binary.LittleEndian.Uint64(d[1:9]), true, d[9]
		rt.log("Program log: Instruction: TransferChecked")
	default:
		return 1_000, rt.tokenFail(ieUnsupportedByFake, "solanafake executes Transfer and TransferChecked of spl-token only")
	}
	cu := uint64(cuTokenTransfer)
	next := 0
	arg := func() (string, int, bool) {
		k, i, ok := rt.key(in, next)
		next++
		return k, i, ok
	}
	srcKey, si, ok := arg()
	var mintKey string
	if checked {
		mintKey, _, ok = arg()
		cu = cuTokenChecked
	}
	dstKey, di, ok2 := arg()
	authKey, ai, ok3 := arg()
	if !ok || !ok2 || !ok3 {
		return cu, rt.tokenFail(ieMissingAccount, "NotEnoughAccountKeys")
	}
	srcAcct, dstAcct := rt.w.get(srcKey), rt.w.get(dstKey)
	src, okS := unpackTokenAccount(srcAcct.data)
	dst, okD := unpackTokenAccount(dstAcct.data)
	if srcAcct.owner != TokenProgram || dstAcct.owner != TokenProgram || !okS || !okD {
		return cu, rt.tokenFail(ieInvalidAccount, "InvalidAccountData")
	}
	if src.state == 2 || dst.state == 2 {
		return cu, rt.tokenFail(custom(17), "Account is frozen")
	}
	if src.amount < amount {
		return cu, rt.tokenFail(custom(1), "insufficient funds")
	}
	if src.mint != dst.mint {
		return cu, rt.tokenFail(custom(3), "Account not associated with this Mint")
	}
	if checked {
		if mintKey != src.mint {
			return cu, rt.tokenFail(custom(3), "Account not associated with this Mint")
		}
		m, ok := unpackMint(rt.w.get(mintKey).data)
		if !ok {
			return cu, rt.tokenFail(ieInvalidAccount, "InvalidAccountData")
		}
		if m.decimals != decimals {
			return cu, rt.tokenFail(custom(18), "The provided decimals value different from the Mint decimals")
		}
	}
	if authKey != src.owner {
		return cu, rt.tokenFail(custom(4), "owner does not match")
	}
	if !rt.t.isSigner(ai) {
		return cu, rt.tokenFail(ieMissingSignature, "MissingRequiredSignature")
	}
	if srcKey == dstKey {
		return cu, nil
	}
	if !rt.writable(si) || !rt.writable(di) {
		return cu, ieReadonlyData
	}
	src.amount -= amount
	dst.amount += amount
	srcAcct.data = src.pack()
	dstAcct.data = dst.pack()
	return cu, nil
}

// ata runs the Associated Token Account program's Create (empty data or
// [0]) and CreateIdempotent ([1]): accounts payer, associated account,
// wallet, mint, System program, Token program.
func (rt *runtime) ata(index int, in wireInstr, budgetAtStart uint64) (uint64, *instrError) {
	idempotent := false
	switch {
	case len(in.data) == 0 || bytes.Equal(in.data, []byte{0}):
		rt.log("Program log: Create")
	case bytes.Equal(in.data, []byte{1}):
		idempotent = true
		rt.log("Program log: CreateIdempotent")
	default:
		return 1_000, ieInvalidData
	}
	var keys [6]string
	var idx [6]int
	for p := range keys {
		k, i, ok := rt.key(in, p)
		if !ok {
			return 1_000, ieMissingAccount
		}
		keys[p], idx[p] = k, i
	}
	payer, ata, wallet, mint, sysProg, tokProg := keys[0], keys[1], keys[2], keys[3], keys[4], keys[5]
	if tokProg != TokenProgram {
		return 2_000, ieIncorrectProgram
	}
	var wk, mk [32]byte
	wb, _ := base58.Decode(wallet)
	mb, _ := base58.Decode(mint)
	copy(wk[:], wb)
	copy(mk[:], mb)
	want, err := AssociatedTokenAddress(wk, mk)
	if err != nil || base58.Encode(want[:]) != ata {
		rt.log("Program log: Error: Associated address does not match seed derivation")
		return 10_000, ieInvalidSeeds
	}
	acct := rt.w.get(ata)
	if idempotent && acct.owner == TokenProgram {
		if ta, ok := unpackTokenAccount(acct.data); ok {
			if ta.owner != wallet {
				rt.log("Program log: Error: Owner does not match")
				return cuATAIdempotentHit, ieIllegalOwner
			}
			return cuATAIdempotentHit, nil
		}
	}
	mintAcct := rt.w.get(mint)
	if mintAcct.owner != TokenProgram {
		return 5_000, ieIllegalOwner
	}
	if _, ok := unpackMint(mintAcct.data); !ok {
		return 5_000, ieInvalidAccount
	}
	used := uint64(cuATA)
	remaining := func() uint64 { return budgetAtStart - used }
	tokenIdx, sysIdx := idx[5], idx[4]
	// GetAccountDataSize with the ImmutableOwner extension.
	rt.log("Program %s invoke [2]", TokenProgram)
	rt.log("Program log: Instruction: GetAccountDataSize")
	rt.log("Program %s consumed %d of %d compute units", TokenProgram, cuGetDataSize, remaining())
	used += cuGetDataSize
	rt.log("Program return: %s pQAAAAAAAAA=", TokenProgram)
	rt.log("Program %s success", TokenProgram)
	rt.r.inner[index] = append(rt.r.inner[index], innerIx{program: tokenIdx, accounts: []int{idx[3]}, data: []byte{21, 7, 0}})
	// CreateAccount (the payer funds the rent-exempt minimum).
	lamports := rentExempt(tokenAccountSize)
	create := make([]byte, 52)
	binary.LittleEndian.PutUint32(create, 0)
	binary.LittleEndian.PutUint64(create[4:], lamports)
	binary.LittleEndian.PutUint64(create[12:], tokenAccountSize)
	tp, _ := base58.Decode(TokenProgram)
	copy(create[20:], tp)
	rt.log("Program %s invoke [2]", sysProg)
	if sysProg != SystemProgram {
		return used, ieIncorrectProgram
	}
	if !rt.t.isSigner(idx[0]) {
		rt.log("Transfer: `from` account %s must sign", payer)
		rt.log("Program %s failed: %s", SystemProgram, ieMissingSignature.text)
		return used, ieMissingSignature
	}
	createIx := wireInstr{program: sysIdx, accounts: []int{idx[0], idx[1]}, data: create}
	// The ATA signs for its own address (invoke_signed), so the check for a
	// signing new account does not apply at depth 2.
	if ierr := rt.system(createIx, 2); ierr != nil {
		rt.log("Program %s failed: %s", SystemProgram, ierr.text)
		return used + cuSystem, ierr
	}
	used += cuSystem
	rt.log("Program %s success", SystemProgram)
	rt.r.inner[index] = append(rt.r.inner[index], innerIx{program: sysIdx, accounts: []int{idx[0], idx[1]}, data: create})
	rt.log("Program log: Initialize the associated token account")
	rt.log("Program %s invoke [2]", TokenProgram)
	rt.log("Program log: Instruction: InitializeImmutableOwner")
	rt.log("Program log: Please upgrade to SPL Token 2022 for immutable owner support")
	rt.log("Program %s consumed %d of %d compute units", TokenProgram, cuImmutableOwner, remaining())
	used += cuImmutableOwner
	rt.log("Program %s success", TokenProgram)
	rt.r.inner[index] = append(rt.r.inner[index], innerIx{program: tokenIdx, accounts: []int{idx[1]}, data: []byte{22}})
	rt.log("Program %s invoke [2]", TokenProgram)
	rt.log("Program log: Instruction: InitializeAccount3")
	rt.log("Program %s consumed %d of %d compute units", TokenProgram, cuInitAccount3, remaining())
	used += cuInitAccount3
	rt.log("Program %s success", TokenProgram)
	rt.r.inner[index] = append(rt.r.inner[index], innerIx{program: tokenIdx, accounts: []int{idx[1], idx[3]}, data: append([]byte{18}, wb...)})
	acct.data = tokenAccount{mint: mint, owner: wallet, state: 1}.pack()
	return used, nil
}

// memo runs spl-memo: valid UTF-8, every listed account a signer.
func (rt *runtime) memo(in wireInstr) (uint64, *instrError) {
	for _, i := range in.accounts {
		if !rt.t.isSigner(i) {
			rt.log("Program log: Missing required signature for %s", rt.t.keys[i])
			return cuMemoBase, ieMissingSignature
		}
	}
	if !utf8.Valid(in.data) {
		rt.log("Program log: Invalid UTF-8, from byte 0")
		return cuMemoBase, ieInvalidData
	}
	rt.log("Program log: Memo (len %d): %s", len(in.data), strconv.Quote(string(in.data)))
	return cuMemoBase + cuMemoPerByte*uint64(len(in.data)), nil
}

// uiTokenAmount is agave's UiTokenAmount.
func uiTokenAmount(amount uint64, decimals uint8) map[string]any {
	s := strconv.FormatUint(amount, 10)
	if decimals > 0 {
		for len(s) <= int(decimals) {
			s = "0" + s
		}
		s = s[:len(s)-int(decimals)] + "." + s[len(s)-int(decimals):]
		s = trimZeros(s)
	}
	f, _ := strconv.ParseFloat(s, 64)
	return map[string]any{"amount": strconv.FormatUint(amount, 10), "decimals": decimals, "uiAmount": uiFloat(f), "uiAmountString": s}
}

func trimZeros(s string) string {
	for len(s) > 0 && s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	if len(s) > 0 && s[len(s)-1] == '.' {
		s = s[:len(s)-1]
	}
	return s
}

// uiFloat prints an f64 as serde_json does: always with a fraction or an
// exponent (1.0, 2.5, 1e-7).
type uiFloat float64

func (f uiFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if v != 0 && (v < 1e-5 || v >= 1e16) {
		return []byte(s), nil
	}
	s = strconv.FormatFloat(v, 'f', -1, 64)
	if !bytes.ContainsAny([]byte(s), ".") {
		s += ".0"
	}
	return []byte(s), nil
}

// metaJSON is the transaction's status meta in the "json" encoding.
func (r *execResult) metaJSON(t *wireTx) map[string]json.RawMessage {
	errJSON, status := json.RawMessage("null"), json.RawMessage(`{"Ok":null}`)
	if r.err != nil {
		errJSON = raw(r.err.json)
		status = raw(map[string]any{"Err": r.err.json})
	}
	inner := []map[string]any{}
	for i := range t.instrs {
		ixs := r.inner[i]
		if len(ixs) == 0 {
			continue
		}
		list := make([]instruction, len(ixs))
		for j, ix := range ixs {
			two := 2
			list[j] = instruction{Accounts: ix.accounts, Data: base58.Encode(ix.data), ProgramIDIndex: ix.program, StackHeight: &two}
		}
		inner = append(inner, map[string]any{"index": i, "instructions": list})
	}
	return map[string]json.RawMessage{
		"computeUnitsConsumed": raw(r.units),
		"err":                  errJSON,
		"fee":                  raw(r.fee),
		"innerInstructions":    raw(inner),
		"loadedAddresses":      raw(map[string][]string{"readonly": {}, "writable": {}}),
		"logMessages":          raw(r.logs),
		"postBalances":         raw(r.post),
		"postTokenBalances":    raw(r.postTok),
		"preBalances":          raw(r.pre),
		"preTokenBalances":     raw(r.preTok),
		"rewards":              raw([]any{}),
		"status":               status,
	}
}

// storedTx is the transaction as the ledger keeps it for getBlock and
// getTransaction.
func (r *execResult) storedTx(t *wireTx) *ftx {
	f := &ftx{version: t.version, header: t.header, keys: t.keys, blockhash: t.blockhash,
		loadedW: []string{}, loadedR: []string{}, failed: r.err != nil, meta: r.metaJSON(t)}
	for _, s := range t.sigs {
		f.signatures = append(f.signatures, base58.Encode(s))
	}
	for _, in := range t.instrs {
		f.instrs = append(f.instrs, instruction{Accounts: in.accounts, Data: base58.Encode(in.data), ProgramIDIndex: in.program})
	}
	if t.version >= 0 {
		f.lookups = []lookup{}
	}
	return f
}
