// Sends the sandbox SPL token to a Solana address's associated token
// account (created on the way) and reads a SOL payment back, with
// @solana/web3.js and @solana/spl-token: node solana-readback.cjs
// <SOL signature> <SOL recipient> <token recipient> <token units>. Prints JSON.
const fs = require('fs');
const { Connection, Keypair, PublicKey } = require('@solana/web3.js');
const spl = require('@solana/spl-token');
const connection = new Connection(process.env.SOLANA_URL, 'confirmed');
const payer = Keypair.fromSecretKey(Uint8Array.from(JSON.parse(fs.readFileSync(process.env.SOLANA_KEYPAIR, 'utf8'))));
const mint = new PublicKey(process.env.SOLANA_TOKEN_MINT);
const [solSig, solTo, tokenTo, units] = process.argv.slice(2);
(async () => {
  const out = {};
  const from = await spl.getOrCreateAssociatedTokenAccount(connection, payer, mint, payer.publicKey);
  const to = await spl.getOrCreateAssociatedTokenAccount(connection, payer, mint, new PublicKey(tokenTo));
  out.tokenSig = await spl.transferChecked(connection, payer, from.address, mint, to.address, payer, BigInt(units), 6);
  out.tokenAccount = to.address.toBase58();
  out.tokens = (await spl.getAccount(connection, to.address)).amount.toString();
  const tok = await connection.getParsedTransaction(out.tokenSig, { maxSupportedTransactionVersion: 0 });
  out.tokenSlot = tok.slot;
  out.tokenParsed = tok.transaction.message.instructions[0].parsed;
  const sol = await connection.getParsedTransaction(solSig, { maxSupportedTransactionVersion: 0 });
  out.solParsed = sol.transaction.message.instructions[0].parsed;
  out.solFee = sol.meta.fee;
  out.solBalance = await connection.getBalance(new PublicKey(solTo));
  out.tokenOwnerBalance = await connection.getBalance(new PublicKey(tokenTo));
  console.log(JSON.stringify(out));
  process.exit(0);
})().catch((e) => { console.error(e && e.stack ? e.stack : e); process.exit(1); });
