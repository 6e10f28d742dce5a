// Reads back two sandbox payments with TronWeb: node tron-readback.cjs
// <TRX txid> <USDT txid> <TRX recipient> <USDT recipient>. Prints JSON.
const { TronWeb } = require('tronweb');
const tronWeb = new TronWeb({ fullHost: process.env.TRON_URL, privateKey: process.env.TRON_PRIVATE_KEY });
const [trxID, usdtID, trxTo, usdtTo] = process.argv.slice(2);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// Waits for a transaction's info (it is in a block), for as long as the
// test's own deadline allows: the machine's speed decides nothing.
async function solidInfo(id) {
  for (;;) {
    const info = await tronWeb.trx.getTransactionInfo(id);
    if (info && info.id) return info;
    await sleep(100);
  }
}
(async () => {
  const out = {};
  const trx = await solidInfo(trxID);
  const usdt = await solidInfo(usdtID);
  out.trx = { fee: trx.fee || 0, receipt: trx.receipt, block: trx.blockNumber };
  out.usdt = { fee: usdt.fee || 0, receipt: usdt.receipt, log: usdt.log, block: usdt.blockNumber };
  out.trxBalance = await tronWeb.trx.getBalance(trxTo);
  const token = await tronWeb.contract().at(process.env.TRON_USDT_CONTRACT);
  out.usdtBalance = (await token.balanceOf(usdtTo).call()).toString();
  const tx = await tronWeb.trx.getTransaction(trxID);
  out.tx = { ret: tx.ret[0].contractRet, signature: tx.signature[0], owner: tx.raw_data.contract[0].parameter.value.owner_address };
  // A mined transaction sent again: DUP_TRANSACTION_ERROR while it has not
  // expired. java-tron checks the expiration first (Wallet.broadcastTransaction,
  // then Manager's validateCommon before validateDup), so the replayed
  // transaction is given an hour, not the default 60 s the payments above
  // may have outlived on a slow machine. It pays 1 sun to an account of
  // no intent.
  const other = tronWeb.address.fromHex('41' + '11'.repeat(20));
  const built = await tronWeb.transactionBuilder.sendTrx(other, 1);
  const signed = await tronWeb.trx.sign(await tronWeb.transactionBuilder.extendExpiration(built, 3600, { txLocal: true }));
  const sent = await tronWeb.trx.sendRawTransaction(signed);
  if (!sent.result) throw new Error('the transaction to replay was refused: ' + JSON.stringify(sent));
  await solidInfo(signed.txID);
  out.replay = await tronWeb.trx.sendRawTransaction(signed);
  if (out.replay.message) out.replay.message = Buffer.from(out.replay.message, 'hex').toString();
  console.log(JSON.stringify(out));
})().catch((e) => { console.error(e && e.stack ? e.stack : e); process.exit(1); });
