package main

import (
	"fmt"
	"net"

	"github.com/paywatch/paywatch/devnet"
)

// port returns the remembered port of name when it is still free, else
// preferred when free, else a free one; and remembers it.
func (s *sandbox) port(name string, preferred int) (int, error) {
	for _, p := range []int{s.state.Ports[name], preferred} {
		if p > 0 && portFree(p) {
			s.state.Ports[name] = p
			return p, nil
		}
	}
	p, err := devnet.FreePort()
	if err != nil {
		return 0, err
	}
	s.state.Ports[name] = p
	return p, nil
}

// portPair is port for name whose next port is free too (the Solana
// node's RPC and pubsub ports, agave's 8899 and 8900).
func (s *sandbox) portPair(name string) (int, error) {
	if p := s.state.Ports[name]; p > 0 && portFree(p) && portFree(p+1) {
		return p, nil
	}
	for range 100 {
		p, err := devnet.FreePort()
		if err != nil {
			return 0, err
		}
		if p < 65535 && portFree(p+1) {
			s.state.Ports[name] = p
			return p, nil
		}
	}
	return 0, fmt.Errorf("no two free consecutive ports for %s", name)
}

func portFree(p int) bool {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

func addrFree(addr string) bool {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	l.Close()
	return true
}
