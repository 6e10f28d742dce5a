// node pay-solana.cjs <intent address> <lamports>   (env: .paywatch/sandbox.env)
const fs = require('fs');
const { Connection, Keypair, PublicKey, SystemProgram, Transaction, sendAndConfirmTransaction } = require('@solana/web3.js');
const connection = new Connection(process.env.SOLANA_URL, 'confirmed');
const payer = Keypair.fromSecretKey(Uint8Array.from(JSON.parse(fs.readFileSync(process.env.SOLANA_KEYPAIR, 'utf8'))));
const [to, lamports] = process.argv.slice(2);
const tx = new Transaction().add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: new PublicKey(to), lamports: BigInt(lamports) }));
sendAndConfirmTransaction(connection, tx, [payer]).then(console.log, (e) => { console.error(e.message); process.exit(1); });
