package main

import (
	"os"
	"path/filepath"
)

// linkLogs gathers every log under logs/ (symbolic links to the nodes' own
// log files).
func (s *sandbox) linkLogs() {
	for name, target := range map[string]string{
		"postgres.log":  filepath.Join("..", "postgres", "server.log"),
		"btcd.log":      filepath.Join("..", "btcd", "btcd.log"),
		"litecoind.log": filepath.Join("..", "litecoind", "litecoind.log"),
		"anvil.log":     filepath.Join("..", "anvil", "anvil.log"),
	} {
		link := filepath.Join(s.dir, "logs", name)
		if cur, err := os.Readlink(link); err == nil && cur == target {
			continue
		}
		_ = os.Remove(link)
		_ = os.Symlink(target, link)
	}
}
