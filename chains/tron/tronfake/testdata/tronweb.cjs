// Drives the simulated node with the real TronWeb (run by TestTronWeb with
// NODE_PATH pointing at the pinned install). Prints one JSON object: what
// the node answered to each step, for the Go test to check.
const { TronWeb, utils } = require('tronweb');

const url = process.env.TRON_URL;
const key = process.env.TRON_PRIVATE_KEY;
const to = process.env.TO;
const usdt = process.env.USDT;
const tronWeb = new TronWeb({ fullHost: url, privateKey: key });
const from = tronWeb.defaultAddress.base58;
const out = {};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(what, f) {
  for (let i = 0; i < 600; i++) {
    const v = await f();
    if (v) return v;
    await sleep(50);
  }
  throw new Error('timed out waiting for ' + what);
}
const text = (r) => (r.message ? Buffer.from(r.message, 'hex').toString() : undefined);

(async () => {
  // TRX the way most code sends it: built locally on the head block, signed, broadcast.
  const sent = await tronWeb.trx.sendTransaction(to, 1_500_000);
  out.trx = { result: sent.result, txid: sent.txid };

  // TRC-20 through the contract's ABI (getcontract), triggersmartcontract and
  // TronWeb's check of the node-built transaction.
  const token = await tronWeb.contract().at(usdt);
  out.usdt = { txid: await token.transfer(to, 2_500_000).send({ feeLimit: 100_000_000 }) };

  // The node builds the TRX transfer (createtransaction); TronWeb re-encodes
  // raw_data and checks raw_data_hex and txID before it signs.
  const built = await tronWeb.fullNode.request('wallet/createtransaction', {
    owner_address: tronWeb.address.toHex(from), to_address: tronWeb.address.toHex(to), amount: 1_000,
  }, 'post');
  const signed = await tronWeb.trx.sign(built);
  const viaNode = await tronWeb.trx.sendRawTransaction(signed);
  out.created = { result: viaNode.result, txid: viaNode.txid, builtTxID: built.txID };
  // The same signed transaction again.
  const again = await tronWeb.trx.sendRawTransaction(signed);
  out.replay = { code: again.code, message: text(again) };

  // Signed by a key that does not own the account (trx.sign refuses to,
  // so the low-level signer does it).
  const other = utils.accounts.generateAccount();
  const unsigned = await tronWeb.transactionBuilder.sendTrx(to, 1_000, from);
  const wrong = await tronWeb.trx.sendRawTransaction(utils.crypto.signTransaction(other.privateKey, unsigned));
  out.wrongKey = { code: wrong.code, message: text(wrong), signer: other.address.base58 };

  // More than the balance.
  const balance = await tronWeb.trx.getUnconfirmedBalance(from);
  const tooMuch = await tronWeb.transactionBuilder.sendTrx(to, balance + 1, from);
  const broke = await tronWeb.trx.sendRawTransaction(await tronWeb.trx.sign(tooMuch));
  out.balance = { code: broke.code, message: text(broke) };

  // A reference block that is not on this chain, and one so old that the
  // transaction expired.
  const head = await tronWeb.trx.getCurrentBlock();
  const h = head.block_header.raw_data;
  const forged = await tronWeb.transactionBuilder.sendTrx(to, 1_000, from, {
    blockHeader: { ref_block_bytes: head.blockID.slice(12, 16), ref_block_hash: '0000000000000000', expiration: h.timestamp + 60_000, timestamp: h.timestamp },
  });
  const tapos = await tronWeb.trx.sendRawTransaction(await tronWeb.trx.sign(forged));
  out.tapos = { code: tapos.code, message: text(tapos) };
  const old = await tronWeb.trx.getBlockByNumber(1);
  const o = old.block_header.raw_data;
  const stale = await tronWeb.transactionBuilder.sendTrx(to, 1_000, from, {
    blockHeader: { ref_block_bytes: old.blockID.slice(12, 16), ref_block_hash: old.blockID.slice(16, 32), expiration: o.timestamp + 60_000, timestamp: o.timestamp },
  });
  const expired = await tronWeb.trx.sendRawTransaction(await tronWeb.trx.sign(stale));
  out.expired = { code: expired.code, message: text(expired) };

  // broadcasthex: the protobuf of a signed transaction.
  const hexTx = await tronWeb.trx.sign(await tronWeb.transactionBuilder.sendTrx(to, 2_000, from));
  const pb = utils.transaction.txJsonToPb(hexTx);
  hexTx.signature.forEach((s) => pb.addSignature(Uint8Array.from(utils.code.hexStr2byteArray(s))));
  const viaHex = await tronWeb.trx.sendHexTransaction(utils.bytes.byteArray2hexStr(pb.serializeBinary()));
  out.hex = { result: viaHex.result, txid: viaHex.txid, hexTxID: hexTx.txID };

  // Read everything back once solidified.
  const info = await until('the USDT transfer to solidify', async () => {
    const i = await tronWeb.trx.getTransactionInfo(out.usdt.txid);
    return i && i.id ? i : null;
  });
  out.usdtInfo = { result: info.receipt.result, energy: info.receipt.energy_usage_total, fee: info.fee, log: info.log.length, block: info.blockNumber };
  const trxInfo = await until('the TRX transfer to solidify', async () => {
    const i = await tronWeb.trx.getTransactionInfo(out.trx.txid);
    return i && i.id ? i : null;
  });
  out.trxInfo = { fee: trxInfo.fee || 0, receipt: trxInfo.receipt };
  await until('the last transfer to solidify', async () => {
    const i = await tronWeb.trx.getTransactionInfo(out.hex.txid);
    return i && i.id;
  });
  out.toBalance = await tronWeb.trx.getBalance(to);
  out.toTokens = (await token.balanceOf(to).call()).toString();
  const tx = await tronWeb.trx.getTransaction(out.trx.txid);
  out.mined = { ret: tx.ret[0].contractRet, signatures: tx.signature.length };
  console.log(JSON.stringify(out));
})().catch((e) => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(1);
});
