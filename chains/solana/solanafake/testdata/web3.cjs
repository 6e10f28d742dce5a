// Drives the simulated cluster with the real @solana/web3.js and
// @solana/spl-token (run by TestWeb3JS with NODE_PATH pointing at the
// pinned install). Prints one JSON object for the Go test to check.
const fs = require('fs');
const web3 = require('@solana/web3.js');
const spl = require('@solana/spl-token');

const { Connection, Keypair, PublicKey, SystemProgram, Transaction, TransactionMessage, VersionedTransaction,
  sendAndConfirmTransaction, LAMPORTS_PER_SOL } = web3;

const url = process.env.SOLANA_URL;
const conn = new Connection(url, { commitment: 'confirmed', wsEndpoint: process.env.SOLANA_WS_URL });
const payer = Keypair.fromSecretKey(Uint8Array.from(JSON.parse(fs.readFileSync(process.env.SOLANA_KEYPAIR, 'utf8'))));
const to = new PublicKey(process.env.TO);
const mint = new PublicKey(process.env.MINT);
const out = {};

// rpc sends one JSON-RPC call and returns the whole answer, to see the
// error object the library reduces to a message.
async function rpc(method, params) {
  const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return res.json();
}
const sendRaw = (tx) => rpc('sendTransaction', [Buffer.from(tx).toString('base64'), { encoding: 'base64' }]);
const refusal = (r) => (r.error ? { code: r.error.code, message: r.error.message, err: r.error.data ? r.error.data.err : undefined,
  logs: r.error.data ? r.error.data.logs : undefined } : { result: r.result });

async function transferTx(lamports, blockhash, signer = payer) {
  const tx = new Transaction({ feePayer: signer.publicKey, recentBlockhash: blockhash })
    .add(SystemProgram.transfer({ fromPubkey: signer.publicKey, toPubkey: to, lamports }));
  tx.sign(signer);
  return tx;
}

(async () => {
  // SOL, legacy message, the usual way.
  const lamports = Number(process.env.LAMPORTS);
  const sig = await sendAndConfirmTransaction(conn,
    new Transaction().add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports })), [payer]);
  out.sol = sig;

  // SOL, v0 message, confirmed by blockhash expiry strategy.
  const latest = await conn.getLatestBlockhash();
  const msg = new TransactionMessage({ payerKey: payer.publicKey, recentBlockhash: latest.blockhash,
    instructions: [SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: 1_000_000 })] }).compileToV0Message();
  const vtx = new VersionedTransaction(msg);
  vtx.sign([payer]);
  const vsig = await conn.sendTransaction(vtx);
  const conf = await conn.confirmTransaction({ signature: vsig, ...latest });
  out.v0 = { sig: vsig, err: conf.value.err };
  out.fee = (await conn.getFeeForMessage(msg)).value;
  out.rent165 = await conn.getMinimumBalanceForRentExemption(165);

  // SPL: the recipient's associated token account, then transferChecked.
  const from = await spl.getOrCreateAssociatedTokenAccount(conn, payer, mint, payer.publicKey);
  const toAta = await spl.getOrCreateAssociatedTokenAccount(conn, payer, mint, to);
  out.ata = toAta.address.toBase58();
  // The idempotent form on an account that exists is a success that changes nothing.
  await spl.createAssociatedTokenAccountIdempotent(conn, payer, mint, to);
  const amount = BigInt(process.env.TOKENS);
  out.spl = await spl.transferChecked(conn, payer, from.address, mint, toAta.address, payer, amount, 6);
  out.splPlain = await spl.transfer(conn, payer, from.address, toAta.address, payer, 1n);

  // Read back.
  const parsed = await conn.getParsedTransaction(out.spl, { maxSupportedTransactionVersion: 0 });
  const ix = parsed.transaction.message.instructions[0];
  out.parsedSPL = { program: ix.program, type: ix.parsed.type, info: ix.parsed.info,
    pre: parsed.meta.preTokenBalances, post: parsed.meta.postTokenBalances };
  const psol = await conn.getParsedTransaction(out.sol, { maxSupportedTransactionVersion: 0 });
  out.parsedSOL = { program: psol.transaction.message.instructions[0].program, type: psol.transaction.message.instructions[0].parsed.type,
    info: psol.transaction.message.instructions[0].parsed.info, fee: psol.meta.fee, slot: psol.slot };
  const createSig = (await conn.getSignaturesForAddress(toAta.address)).map((s) => s.signature).pop();
  const pcreate = await conn.getParsedTransaction(createSig, { maxSupportedTransactionVersion: 0 });
  out.parsedCreate = { type: pcreate.transaction.message.instructions[0].parsed.type,
    inner: pcreate.meta.innerInstructions[0].instructions.map((i) => i.parsed.type), logs: pcreate.meta.logMessages.length };
  const raw = await conn.getTransaction(out.v0.sig, { maxSupportedTransactionVersion: 0 });
  out.rawV0 = { version: raw.version, fee: raw.meta.fee, err: raw.meta.err };
  out.balance = await conn.getBalance(to);
  out.tokens = (await spl.getAccount(conn, toAta.address)).amount.toString();
  out.tokenBalance = (await conn.getTokenAccountBalance(toAta.address)).value;
  const info = await conn.getParsedAccountInfo(toAta.address);
  out.parsedAccount = info.value.data.parsed;
  out.mintInfo = { decimals: (await spl.getMint(conn, mint)).decimals };
  const block = await conn.getParsedBlock(parsed.slot, { maxSupportedTransactionVersion: 0 });
  out.block = { txs: block.transactions.length };
  const st = await conn.getSignatureStatuses([out.spl, out.sol]);
  out.statuses = st.value.map((s) => s && s.confirmationStatus);

  // Refusals.
  const { blockhash } = await conn.getLatestBlockhash();
  // A signature that is not the fee payer's.
  const other = Keypair.generate();
  const wrong = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash })
    .add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: 5 }));
  wrong.addSignature(payer.publicKey, Buffer.from(require('@noble/curves/ed25519').ed25519.sign(wrong.serializeMessage(), other.secretKey.slice(0, 32))));
  out.wrongSig = refusal(await sendRaw(wrong.serialize({ verifySignatures: false })));
  try {
    await conn.sendRawTransaction(wrong.serialize({ verifySignatures: false }));
  } catch (e) {
    out.wrongSigLibrary = e.message;
  }
  // More lamports than the payer has.
  out.tooMuch = refusal(await sendRaw((await transferTx((await conn.getBalance(payer.publicKey)) + 1, blockhash)).serialize()));
  // A replay of a confirmed transaction.
  const again = await transferTx(7, blockhash);
  const once = await conn.sendRawTransaction(again.serialize());
  await conn.confirmTransaction({ signature: once, blockhash, lastValidBlockHeight: latest.lastValidBlockHeight + 1000 });
  out.replay = refusal(await sendRaw(again.serialize()));
  // A fee payer that never received anything.
  const nobody = Keypair.generate();
  out.unfunded = refusal(await sendRaw((await transferTx(1, blockhash, nobody)).serialize()));
  // Tokens beyond the balance, and tokens sent to a wallet instead of its token account.
  const over = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash })
    .add(spl.createTransferCheckedInstruction(from.address, mint, toAta.address, payer.publicKey, 10n ** 18n, 6));
  over.sign(payer);
  out.tokensTooMuch = refusal(await sendRaw(over.serialize()));
  const misdirected = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash })
    .add(spl.createTransferInstruction(from.address, to, payer.publicKey, 1n));
  misdirected.sign(payer);
  out.notTokenAccount = refusal(await sendRaw(misdirected.serialize()));
  // A blockhash that expired: the cluster moves 151 blocks on.
  const stale = await transferTx(9, blockhash);
  await fetch(process.env.CONTROL_URL + '/mine', { method: 'POST', body: JSON.stringify({ slots: 151 }) });
  out.valid = (await conn.isBlockhashValid(blockhash)).value;
  out.expired = refusal(await sendRaw(stale.serialize()));
  try {
    await conn.sendRawTransaction(stale.serialize());
  } catch (e) {
    out.expiredLibrary = e.message;
  }
  out.feeExpired = (await rpc('getFeeForMessage', [stale.serializeMessage().toString('base64')])).result.value;
  console.log(JSON.stringify(out));
  process.exit(0);
})().catch((e) => {
  console.error(e && e.stack ? e.stack : e);
  if (e && e.logs) console.error(e.logs);
  process.exit(1);
});
