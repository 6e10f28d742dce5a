package addresses

import "github.com/paywatch/paywatch/payment"

// SandboxKeys are the account-level extended public keys of the well-known
// Hardhat/Foundry test mnemonic "test test test test test test test test test
// test test junk", for the local sandbox and tests only. Its private keys are
// public knowledge: never send real money to these addresses. paywatch holds
// only these public keys, never the mnemonic.
//
//   - bitcoin:  m/84'/1'/0' (vpub, BIP84 testnet/regtest coin type)
//   - litecoin: m/84'/2'/0' (Ltub)
//   - ethereum: m/44'/60'/0' (xpub; index 0 is anvil's first account
//     0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266)
//   - tron:     m/44'/195'/0' (xpub)
//
// Solana has no derivation; see SandboxSolanaPool. The test suite recomputes
// every key from the mnemonic.
var SandboxKeys = map[payment.Network]string{
	payment.Bitcoin:  "vpub5YRRorZVvAATHuEEHuFw1sBdoTr86WAbRqErEmc37QW5GQdJ6QT2iARGALeCtcpVRmFdR1PQ4BFAuCNPy6Rv4tqSLNHpbaCNDAF4K549MT1",
	payment.Litecoin: "Ltub2YWJAmaeQmhQBm7h3a5jZLUa1MjVRCv3uRhUhuwTwKjSRMAYifywnswKSBMunmL9H7hBY1XTurRUR1XpxaHFpn8Rs1Pi4hZQX5fwddTuFKX",
	payment.Ethereum: "xpub6Ce9NcJvTk36xtLSrJLZqE7wtgA5deCeYs7rSQtreh4cj6ByPtrg9sD7V2FNFLPnf8heNP3FGkeV9qwfzvZNSd54JoNXVsXFYSYwHsnJxqP",
	payment.Tron:     "xpub6BuRy7ZmkGfP2RWhoor1kWB1w9DvrtmJbFBvnC1bQ4SB5NbCHTyQYCJSXZtxDbFyHTmC7wkU2he3nYYdpZ3Vf6qUAkXSnL6RPif4BDtDEKr",
}

// SandboxBitcoinMainnetKey is the BIP84 mainnet account key m/84'/0'/0' (zpub)
// of the same mnemonic, for tests of mainnet encodings only.
const SandboxBitcoinMainnetKey = "zpub6qiy8cvfjiUGpweZnK5zLcKWkizhTsraN95DLyQVvvkp8aevEF8KMzSBnnLix3m9NYqeoLBLEc7G2rJVVCEj1A82gRVN2BXGiWmYosGpCAy"

// SandboxSolanaPool is a pool of 20 ed25519 public keys for the local
// sandbox and tests only. Key i is the public key of
// ed25519.NewKeyFromSeed(sha256("paywatch sandbox solana " + decimal(i))),
// so its secret is public knowledge too. The test suite recomputes them.
var SandboxSolanaPool = []string{
	"3E95aAVYb5F8XKk8X7wH2nxiUnPXBCFwVt8GfC2uf9cd",
	"22MLSp74Trx7e5deZiLaG39DZHbr5FafPoS4wUBWz8tA",
	"CGXSxrkJd5pAe1y56DDYXhjipdZGhuRqHBK8ng1XgbV9",
	"4PNHQ41ZuNLwSvDxuXdwHpmBKAGA5YvcF64eDYcX52NZ",
	"3XQNCaEnUE7i3bh97HrfvmPVa92edMCSUtLpNsYcVP2S",
	"HbHiaZaz4Xrz3nife1GAFmyDGYqjwMME5BDaDwpSALZs",
	"6AM9ULpufY1kGPKyjDs59otv7SfSUCVmSjfkuC6afAmW",
	"CAf6qPyfmHrXYKWJr8As24XPLtEhJLtUkABBNihRbPGn",
	"qYLfkQFdH7ShSrgLaXNygQeteYF9hFMQY6tpzpceXWg",
	"3qqFVLYLeT5dkBFuE5JEdhtFPE82FRecKfwahKcn4yZh",
	"8AdnsKRW7M6sgEi3D7y529aJz7qtp4QnhtnUJKaF5Ewn",
	"FThEHrDfZwG3rQd1hvuNBkjv8gdURE3ErHupQbVALd1M",
	"4RNB9EHw4onq4QdnmkSb7RuDGvvHTpegMVMV3XPTmMSx",
	"E9tXv7tmZdUTaUXDbANnnWJZKKPbUzskEJbRJAqfWDmc",
	"AGtLp4FvdECWwPQhEY2fkdwf6vrqYaCtuurDKVUPzWZG",
	"2XPA2hahX2z2fkWcWqsQ9tnCe632HJygsGDGUhEFgSQo",
	"BHiNpGR7mqjuW9SnssBxN96V5Uso858okDaxcFpr7cEd",
	"Ds1s6e3uzpKjiMbcyeHoS6aHTTXnmciMJeupDrALxFwt",
	"86cXgPAQGqgeUa8h8rhziNN3akYUUdJNHU6hkv8PzBtN",
	"CyWYJ5jjh23GFyeVERZTK6ZTw6TQFKyLqSVvsfQ7oRpZ",
}
