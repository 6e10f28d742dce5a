// node pay-tron.cjs <intent address> <amount in base units> [USDT]   (env: .paywatch/sandbox.env)
const { TronWeb } = require('tronweb');
const tronWeb = new TronWeb({ fullHost: process.env.TRON_URL, privateKey: process.env.TRON_PRIVATE_KEY });
const [to, amount, token] = process.argv.slice(2);
(async () => {
  const txid = token === 'USDT'
    ? await (await tronWeb.contract().at(process.env.TRON_USDT_CONTRACT)).transfer(to, amount).send({ feeLimit: 100_000_000 })
    : (await tronWeb.trx.sendTransaction(to, Number(amount))).txid;
  console.log(txid);
})();
