package addresses

import "fmt"

// publicMnemonic is a mnemonic whose words are published: every key derived
// from it is anyone's to spend.
type publicMnemonic struct {
	name  string
	words string
}

var (
	junk    = publicMnemonic{"Hardhat/Foundry/anvil default", "test test test test test test test test test test test junk"}
	abandon = publicMnemonic{"BIP39/BIP84 test vector", "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"}
)

// wellKnownKey is an account key derived from a public mnemonic.
type wellKnownKey struct {
	mnemonic publicMnemonic
	path     string
}

// WellKnownTestKey reports whether accountKey is an account key of a public
// test mnemonic (among them every SandboxKeys entry), and describes it: its
// derivation path, the mnemonic and its fingerprint. Keys are matched by
// Fingerprint, so a re-encoding of the same key (an xpub turned zpub) is
// recognised too. An unparseable key is not well known (NewDeriver reports
// what is wrong with it).
//
// The table holds m/purpose'/coin'/account' for the purposes 44, 49, 84 and
// 86, the coin types 0 (Bitcoin), 1 (any testnet), 2 (Litecoin), 60
// (Ethereum) and 195 (Tron), and the accounts 0 to 4 of the two mnemonics;
// the tests recompute every entry from the words.
func WellKnownTestKey(accountKey string) (string, bool) {
	fp, err := Fingerprint(accountKey)
	if err != nil {
		return "", false
	}
	k, ok := wellKnownKeys[fp]
	if !ok {
		return "", false
	}
	return fmt.Sprintf("%s of the %s mnemonic %q (fingerprint %s)", k.path, k.mnemonic.name, k.mnemonic.words, fp), true
}

// WellKnownPoolKey reports whether a Solana pool address is one of
// SandboxSolanaPool, whose secret keys are public.
func WellKnownPoolKey(address string) bool {
	for _, k := range SandboxSolanaPool {
		if k == address {
			return true
		}
	}
	return false
}

// wellKnownKeys maps the Fingerprint of each account key of the public
// mnemonics to where it comes from.
var wellKnownKeys = map[string]wellKnownKey{
	"5e77e4985084c77a": {junk, "m/44'/0'/0'"},
	"985bdc9bf8fd667f": {junk, "m/44'/0'/1'"},
	"089439489508f7d0": {junk, "m/44'/0'/2'"},
	"4e6caa70dc299e96": {junk, "m/44'/0'/3'"},
	"e48bb49fce34eb43": {junk, "m/44'/0'/4'"},
	"f5b6b7eada36a6d3": {junk, "m/44'/1'/0'"},
	"dd692f325ac7efc2": {junk, "m/44'/1'/1'"},
	"dd7e11333bd7a7f2": {junk, "m/44'/1'/2'"},
	"5224ddb371392385": {junk, "m/44'/1'/3'"},
	"f723fde45e586924": {junk, "m/44'/1'/4'"},
	"a5882a2f5bc568cc": {junk, "m/44'/2'/0'"},
	"ff4d92516ebc24ef": {junk, "m/44'/2'/1'"},
	"bbd6c4a5bc189f64": {junk, "m/44'/2'/2'"},
	"542bb7a8843cfa75": {junk, "m/44'/2'/3'"},
	"ea59bd87c6878124": {junk, "m/44'/2'/4'"},
	"805ea1501168425c": {junk, "m/44'/60'/0'"},
	"d7070fe2bfb28db8": {junk, "m/44'/60'/1'"},
	"66e5294e0e3bd25e": {junk, "m/44'/60'/2'"},
	"756553a39a0090f3": {junk, "m/44'/60'/3'"},
	"a54e1b5f87f65020": {junk, "m/44'/60'/4'"},
	"260deaf6e1d163da": {junk, "m/44'/195'/0'"},
	"23a02c46472a0594": {junk, "m/44'/195'/1'"},
	"af7d3c79a518cae0": {junk, "m/44'/195'/2'"},
	"db0ac7381e13cf73": {junk, "m/44'/195'/3'"},
	"1cd1f5c83d0f62c7": {junk, "m/44'/195'/4'"},
	"ceec066b258a7e9c": {junk, "m/49'/0'/0'"},
	"5ed865547004d953": {junk, "m/49'/0'/1'"},
	"b4cb0f519913d48b": {junk, "m/49'/0'/2'"},
	"5c40d509dd93ef05": {junk, "m/49'/0'/3'"},
	"1d67965ffc111a6d": {junk, "m/49'/0'/4'"},
	"035710375411f298": {junk, "m/49'/1'/0'"},
	"cef647adde4d0e9d": {junk, "m/49'/1'/1'"},
	"6002711b790c6cae": {junk, "m/49'/1'/2'"},
	"88d6da38ed5d1a40": {junk, "m/49'/1'/3'"},
	"c04b24cf1aca790c": {junk, "m/49'/1'/4'"},
	"d8c6b3cb32e2de5e": {junk, "m/49'/2'/0'"},
	"059162e6fda08afd": {junk, "m/49'/2'/1'"},
	"cd4a35e5bfabe9f1": {junk, "m/49'/2'/2'"},
	"1d78d4a7ec9f991c": {junk, "m/49'/2'/3'"},
	"fd2eeac906739be9": {junk, "m/49'/2'/4'"},
	"cdf2e4ff9b70ec5f": {junk, "m/49'/60'/0'"},
	"f77ace0d12ec3e75": {junk, "m/49'/60'/1'"},
	"bee5ab2d4b32ea92": {junk, "m/49'/60'/2'"},
	"829a6307e9e572fa": {junk, "m/49'/60'/3'"},
	"2d9f0d3f62aa2f4f": {junk, "m/49'/60'/4'"},
	"1ec9e9b8b13c640b": {junk, "m/49'/195'/0'"},
	"d14c49845a78f415": {junk, "m/49'/195'/1'"},
	"8c7163cc7fc0d38d": {junk, "m/49'/195'/2'"},
	"b21dfe9492dfca4f": {junk, "m/49'/195'/3'"},
	"e63fae3dfb7cf401": {junk, "m/49'/195'/4'"},
	"f1ef8d08429e77cb": {junk, "m/84'/0'/0'"},
	"8935fd8c279bf605": {junk, "m/84'/0'/1'"},
	"8672ade8f9d0540f": {junk, "m/84'/0'/2'"},
	"ca1cea81d111d83b": {junk, "m/84'/0'/3'"},
	"e20944a070bd0ba0": {junk, "m/84'/0'/4'"},
	"b41c1d70b42e2705": {junk, "m/84'/1'/0'"},
	"9a009d03edcf8a48": {junk, "m/84'/1'/1'"},
	"8255ae058f198428": {junk, "m/84'/1'/2'"},
	"005657830965b862": {junk, "m/84'/1'/3'"},
	"81c6c10cfdc5bbed": {junk, "m/84'/1'/4'"},
	"099824a3dbb79f69": {junk, "m/84'/2'/0'"},
	"04bda2b272954d89": {junk, "m/84'/2'/1'"},
	"fdf0f020f042f382": {junk, "m/84'/2'/2'"},
	"71be816a300ae0b8": {junk, "m/84'/2'/3'"},
	"cd3cf9ef8ef2d8f0": {junk, "m/84'/2'/4'"},
	"56142b0eed9a95ea": {junk, "m/84'/60'/0'"},
	"bda7a0316c4dbe32": {junk, "m/84'/60'/1'"},
	"3be3ac271a762ed3": {junk, "m/84'/60'/2'"},
	"55e37cc2c3857dba": {junk, "m/84'/60'/3'"},
	"48a6a53ac9f0ecaf": {junk, "m/84'/60'/4'"},
	"b27992c28653b0ee": {junk, "m/84'/195'/0'"},
	"53948ef8545d7ddd": {junk, "m/84'/195'/1'"},
	"a5613f7da20a911a": {junk, "m/84'/195'/2'"},
	"202292596d9b85cc": {junk, "m/84'/195'/3'"},
	"64b04f0520be0a1a": {junk, "m/84'/195'/4'"},
	"dc83371a89873c98": {junk, "m/86'/0'/0'"},
	"a01825234790b61c": {junk, "m/86'/0'/1'"},
	"13ddcc9e2c45bb9c": {junk, "m/86'/0'/2'"},
	"93338e2ae75f0705": {junk, "m/86'/0'/3'"},
	"afcf04df8b345cbe": {junk, "m/86'/0'/4'"},
	"b77f38b33665007d": {junk, "m/86'/1'/0'"},
	"9659ae9d6c52caad": {junk, "m/86'/1'/1'"},
	"063a2fe6749c22e5": {junk, "m/86'/1'/2'"},
	"7dd7391b9c740ffd": {junk, "m/86'/1'/3'"},
	"df5f36086d41ce3d": {junk, "m/86'/1'/4'"},
	"13423faacf446a93": {junk, "m/86'/2'/0'"},
	"cb22b70086ed5fb1": {junk, "m/86'/2'/1'"},
	"7a6ddffad82889c5": {junk, "m/86'/2'/2'"},
	"bce3b5273d98e564": {junk, "m/86'/2'/3'"},
	"ac4f342136f6a163": {junk, "m/86'/2'/4'"},
	"03fd0d403863dfc2": {junk, "m/86'/60'/0'"},
	"2505dbc61665e4af": {junk, "m/86'/60'/1'"},
	"37694d76670f8725": {junk, "m/86'/60'/2'"},
	"87c56e747de4170f": {junk, "m/86'/60'/3'"},
	"ae481a4768b3c83a": {junk, "m/86'/60'/4'"},
	"75982c261688227e": {junk, "m/86'/195'/0'"},
	"16ce474048bc9f77": {junk, "m/86'/195'/1'"},
	"f4d03df78430d997": {junk, "m/86'/195'/2'"},
	"4feb8a74f58ee83c": {junk, "m/86'/195'/3'"},
	"3c476d3570b4b94b": {junk, "m/86'/195'/4'"},
	"cb343c910692bff5": {abandon, "m/44'/0'/0'"},
	"ddf4ba3e8a971306": {abandon, "m/44'/0'/1'"},
	"6e9e8caa9de32d2b": {abandon, "m/44'/0'/2'"},
	"fcf03e9158b6d846": {abandon, "m/44'/0'/3'"},
	"4de61997dc930358": {abandon, "m/44'/0'/4'"},
	"151fc9f6b12596e2": {abandon, "m/44'/1'/0'"},
	"2ebb8f83eb942a03": {abandon, "m/44'/1'/1'"},
	"5d4efc97d8a76358": {abandon, "m/44'/1'/2'"},
	"2e5d0384cade720c": {abandon, "m/44'/1'/3'"},
	"5419ae0f3a3110ab": {abandon, "m/44'/1'/4'"},
	"5fd2c0257d9558c8": {abandon, "m/44'/2'/0'"},
	"195ebc7739a17ac5": {abandon, "m/44'/2'/1'"},
	"b96068785451338e": {abandon, "m/44'/2'/2'"},
	"609737fe1cd87d84": {abandon, "m/44'/2'/3'"},
	"92b0caa6fc9d7808": {abandon, "m/44'/2'/4'"},
	"12329a45453006a3": {abandon, "m/44'/60'/0'"},
	"80c9fdc4f44d2a7b": {abandon, "m/44'/60'/1'"},
	"aad178af567b8db0": {abandon, "m/44'/60'/2'"},
	"21e1f9a308d58629": {abandon, "m/44'/60'/3'"},
	"9f1793243229e1c1": {abandon, "m/44'/60'/4'"},
	"3ef261fd17f411dc": {abandon, "m/44'/195'/0'"},
	"7df1d732d825ca2c": {abandon, "m/44'/195'/1'"},
	"becabc3a34aea261": {abandon, "m/44'/195'/2'"},
	"69ed30c2ddb3cc0d": {abandon, "m/44'/195'/3'"},
	"3dcd8b80d74363d9": {abandon, "m/44'/195'/4'"},
	"0e71067f972e5fce": {abandon, "m/49'/0'/0'"},
	"3a869c82a6668d30": {abandon, "m/49'/0'/1'"},
	"eba9e405aec383cc": {abandon, "m/49'/0'/2'"},
	"525da1511ca2aeb4": {abandon, "m/49'/0'/3'"},
	"63b0d9c65aa02661": {abandon, "m/49'/0'/4'"},
	"c880149f866e04e6": {abandon, "m/49'/1'/0'"},
	"5c6d17b3d4b4618d": {abandon, "m/49'/1'/1'"},
	"675cfadbc1af148f": {abandon, "m/49'/1'/2'"},
	"03a0f382ffa0ee8d": {abandon, "m/49'/1'/3'"},
	"189a13bda8de6b0f": {abandon, "m/49'/1'/4'"},
	"136736e4495d3ee1": {abandon, "m/49'/2'/0'"},
	"535e68e3596c3c35": {abandon, "m/49'/2'/1'"},
	"fa9451005841ef71": {abandon, "m/49'/2'/2'"},
	"44805426456399dc": {abandon, "m/49'/2'/3'"},
	"c0a8c7884932a95b": {abandon, "m/49'/2'/4'"},
	"9f4f23985a093c02": {abandon, "m/49'/60'/0'"},
	"03448c30cc3ff566": {abandon, "m/49'/60'/1'"},
	"6260365124fdc2c2": {abandon, "m/49'/60'/2'"},
	"c9a7b8052b575599": {abandon, "m/49'/60'/3'"},
	"df76b53f0698d4fb": {abandon, "m/49'/60'/4'"},
	"9ef459943380d5e7": {abandon, "m/49'/195'/0'"},
	"37255f344b802c6f": {abandon, "m/49'/195'/1'"},
	"d7373d297802d8fa": {abandon, "m/49'/195'/2'"},
	"1a0b6dd5330d1fe3": {abandon, "m/49'/195'/3'"},
	"a1eb284232bef962": {abandon, "m/49'/195'/4'"},
	"e7b44782b0ca91ce": {abandon, "m/84'/0'/0'"},
	"1748171aade7a737": {abandon, "m/84'/0'/1'"},
	"617e33157c022b0e": {abandon, "m/84'/0'/2'"},
	"05e00d6a8a2bf7b1": {abandon, "m/84'/0'/3'"},
	"fee85e79c59e003d": {abandon, "m/84'/0'/4'"},
	"656793784add8b3a": {abandon, "m/84'/1'/0'"},
	"45c650263ab6cdd6": {abandon, "m/84'/1'/1'"},
	"2cf0a07d1648c0ae": {abandon, "m/84'/1'/2'"},
	"d521c69a7b0b150c": {abandon, "m/84'/1'/3'"},
	"13276ddc2ced868e": {abandon, "m/84'/1'/4'"},
	"35dd5e5cbc20fed4": {abandon, "m/84'/2'/0'"},
	"fba3ee57c3fc6144": {abandon, "m/84'/2'/1'"},
	"490c185424cacf55": {abandon, "m/84'/2'/2'"},
	"c24957bbff9ec570": {abandon, "m/84'/2'/3'"},
	"090900cb298c5647": {abandon, "m/84'/2'/4'"},
	"808fb3c4e21c11e2": {abandon, "m/84'/60'/0'"},
	"cb304b7a95e5165b": {abandon, "m/84'/60'/1'"},
	"3a777b029f935a65": {abandon, "m/84'/60'/2'"},
	"368a24bbd003a1f7": {abandon, "m/84'/60'/3'"},
	"831a2b9dcd97d5e9": {abandon, "m/84'/60'/4'"},
	"18d8f6ca41bfac94": {abandon, "m/84'/195'/0'"},
	"d42dc243b5f2e160": {abandon, "m/84'/195'/1'"},
	"c5d5ec0ab3acf391": {abandon, "m/84'/195'/2'"},
	"212f68ccb1047965": {abandon, "m/84'/195'/3'"},
	"86b0c30988301973": {abandon, "m/84'/195'/4'"},
	"e72e04fdcd12905e": {abandon, "m/86'/0'/0'"},
	"7e49af8b82f4250b": {abandon, "m/86'/0'/1'"},
	"822257174ee3e0b8": {abandon, "m/86'/0'/2'"},
	"aa517104a52cd60b": {abandon, "m/86'/0'/3'"},
	"968cf67182631e6f": {abandon, "m/86'/0'/4'"},
	"ebbfd381799e9d83": {abandon, "m/86'/1'/0'"},
	"f260b0c595252b0c": {abandon, "m/86'/1'/1'"},
	"50bfff903a08d7be": {abandon, "m/86'/1'/2'"},
	"be738d3ba1bd6d1a": {abandon, "m/86'/1'/3'"},
	"1a6be0408fc437b3": {abandon, "m/86'/1'/4'"},
	"f74bbea32841f872": {abandon, "m/86'/2'/0'"},
	"22b508c53efeb6df": {abandon, "m/86'/2'/1'"},
	"a8b0812f41f0f918": {abandon, "m/86'/2'/2'"},
	"5aa949249ff94c02": {abandon, "m/86'/2'/3'"},
	"1a12d8d0bb1c1dfd": {abandon, "m/86'/2'/4'"},
	"fd80b04d0bd4dc5b": {abandon, "m/86'/60'/0'"},
	"ee5954fbf43843b8": {abandon, "m/86'/60'/1'"},
	"ecb766ea18e300e0": {abandon, "m/86'/60'/2'"},
	"fa60286d973a110f": {abandon, "m/86'/60'/3'"},
	"be00edd31652b171": {abandon, "m/86'/60'/4'"},
	"02a88d28497ca15e": {abandon, "m/86'/195'/0'"},
	"751390aafb555bfd": {abandon, "m/86'/195'/1'"},
	"ca251bd2b17e9ae8": {abandon, "m/86'/195'/2'"},
	"c4f9f8b7a93abe94": {abandon, "m/86'/195'/3'"},
	"b9e7b72047d852a8": {abandon, "m/86'/195'/4'"},
}
