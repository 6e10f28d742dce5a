// compile.js compiles contracts/src/*.sol with solc-js and writes
// contracts/build/<Contract>.abi.json and <Contract>.bin. Run via build.sh.
const fs = require('fs');
const path = require('path');
const solc = require('solc');

const srcDir = path.join(__dirname, 'src');
const outDir = path.join(__dirname, 'build');
const sources = {};
for (const f of fs.readdirSync(srcDir).filter((f) => f.endsWith('.sol')).sort()) {
  sources[f] = { content: fs.readFileSync(path.join(srcDir, f), 'utf8') };
}
const input = {
  language: 'Solidity',
  sources,
  settings: {
    optimizer: { enabled: true, runs: 200 },
    evmVersion: 'cancun',
    outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
  },
};
const out = JSON.parse(solc.compile(JSON.stringify(input)));
let failed = false;
for (const e of out.errors || []) {
  console.error(e.formattedMessage);
  if (e.severity === 'error') failed = true;
}
if (failed) process.exit(1);
fs.mkdirSync(outDir, { recursive: true });
for (const file of Object.keys(out.contracts).sort()) {
  for (const name of Object.keys(out.contracts[file]).sort()) {
    const c = out.contracts[file][name];
    fs.writeFileSync(path.join(outDir, name + '.abi.json'), JSON.stringify(c.abi, null, 1) + '\n');
    fs.writeFileSync(path.join(outDir, name + '.bin'), c.evm.bytecode.object + '\n');
    console.log(name, c.evm.bytecode.object.length / 2, 'bytes');
  }
}
console.log('solc', solc.version());
