// Reads back two sandbox payments with TronWeb: node tron-readback.cjs
// <TRX txid> <USDT txid> <TRX recipient> <USDT recipient>. Prints JSON.
const { TronWeb } = require('tronweb');
const tronWeb = new TronWeb({ fullHost: process.env.TRON_URL, privateKey: process.env.TRON_PRIVATE_KEY });
const [trxID, usdtID, trxTo, usdtTo] = process.argv.slice(2);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function solidInfo(id) {
  for (let i = 0; i < 300; i++) {
    const info = await tronWeb.trx.getTransactionInfo(id);
    if (info && info.id) return info;
    await sleep(100);
  }
  throw new Error('no solidified info for ' + id);
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
  // The same signed transaction again: the node refuses it.
  out.replay = await tronWeb.trx.sendRawTransaction(tx);
  if (out.replay.message) out.replay.message = Buffer.from(out.replay.message, 'hex').toString();
  console.log(JSON.stringify(out));
})().catch((e) => { console.error(e && e.stack ? e.stack : e); process.exit(1); });
