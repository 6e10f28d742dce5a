package walletjs

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/paywatch/paywatch/devnet"
)

// Packages are the npm packages and the exact versions the tests use.
// TronWeb 6.5 and @solana/web3.js 1.98 both install on Node 20.
var Packages = []Package{
	{Name: "tronweb", Version: "6.5.1"},
	{Name: "@solana/web3.js", Version: "1.98.4"},
	{Name: "@solana/spl-token", Version: "0.4.14"},
}

// Package is one pinned npm package.
type Package struct {
	Name, Version string
}

// Spec is the package as npm install takes it (name@version).
func (p Package) Spec() string { return p.Name + "@" + p.Version }

// CacheDir is the npm prefix the packages are installed under:
// $PAYWATCH_WALLETJS_DIR, else ~/.cache/paywatch/wallets.
func CacheDir() string {
	if d := os.Getenv("PAYWATCH_WALLETJS_DIR"); d != "" {
		return d
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "paywatch", "wallets")
}

// InstallCommand is the command that installs the pinned packages.
func InstallCommand() string {
	specs := make([]string, len(Packages))
	for i, p := range Packages {
		specs[i] = p.Spec()
	}
	return fmt.Sprintf("npm install --prefix %s --no-audit --no-fund --no-save %s", CacheDir(), strings.Join(specs, " "))
}

// Env is a node binary and the node_modules directory holding the packages.
type Env struct {
	Node    string
	Modules string
}

// Find locates node and the pinned packages under CacheDir.
func Find() (Env, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return Env{}, fmt.Errorf("%w: node (Node.js 20; Debian's nodejs)", devnet.ErrMissing)
	}
	modules := filepath.Join(CacheDir(), "node_modules")
	for _, p := range Packages {
		b, err := os.ReadFile(filepath.Join(modules, filepath.FromSlash(p.Name), "package.json"))
		var pj struct {
			Version string `json:"version"`
		}
		if err == nil {
			err = json.Unmarshal(b, &pj)
		}
		if err != nil || pj.Version != p.Version {
			have := pj.Version
			if have == "" {
				have = "none"
			}
			return Env{}, fmt.Errorf("%w: %s (have %s; %s)", devnet.ErrMissing, p.Spec(), have, InstallCommand())
		}
	}
	return Env{Node: node, Modules: modules}, nil
}

// Command returns the command that runs script (a CommonJS file) with env
// (KEY=VALUE) added to PATH, HOME and NODE_PATH.
func (e Env) Command(ctx context.Context, script string, env ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, e.Node, script)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "NODE_PATH=" + e.Modules}, env...)
	return cmd
}
