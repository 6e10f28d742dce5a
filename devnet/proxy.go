package devnet

import (
	"net"
	"sync"
)

// Proxy forwards TCP connections from a loopback port to a target address.
// Blackhole makes it behave like a peer that vanished without closing its
// sockets (a power loss, a partition): open connections stay open but
// nothing more is forwarded, and new connections are accepted and never
// answered. Open stops the blackhole; connections accepted during it stay
// dead, as they would after a real partition.
type Proxy struct {
	ln     net.Listener
	mu     sync.Mutex
	target string
	holed  bool
	pairs  map[net.Conn]net.Conn
	closed bool
}

// NewProxy listens on a free loopback port and forwards to target.
func NewProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, pairs: map[net.Conn]net.Conn{}}
	go p.accept()
	return p, nil
}

// Addr is the proxy's listen address (host:port).
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Port is the proxy's listen port.
func (p *Proxy) Port() int { return p.ln.Addr().(*net.TCPAddr).Port }

// SetTarget makes new connections go to target.
func (p *Proxy) SetTarget(target string) {
	p.mu.Lock()
	p.target = target
	p.mu.Unlock()
}

// Blackhole stops forwarding in both directions without closing anything.
func (p *Proxy) Blackhole() {
	p.mu.Lock()
	p.holed = true
	p.mu.Unlock()
}

// Open forwards again (new connections only: the ones open during the
// blackhole are cut, both ends, as a peer that comes back has forgotten
// them).
func (p *Proxy) Open() {
	p.mu.Lock()
	if p.holed {
		for a, b := range p.pairs {
			a.Close()
			if b != nil {
				b.Close()
			}
		}
		p.pairs = map[net.Conn]net.Conn{}
	}
	p.holed = false
	p.mu.Unlock()
}

// Close stops listening and closes every connection.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for a, b := range p.pairs {
		a.Close()
		if b != nil {
			b.Close()
		}
	}
	p.pairs = map[net.Conn]net.Conn{}
	p.mu.Unlock()
	return p.ln.Close()
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.serve(c)
	}
}

func (p *Proxy) serve(c net.Conn) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		c.Close()
		return
	}
	p.pairs[c] = nil
	holed, target := p.holed, p.target
	p.mu.Unlock()
	if holed {
		return // accepted, never answered; Open or Close cuts it
	}
	s, err := net.Dial("tcp", target)
	if err != nil {
		p.drop(c)
		return
	}
	p.mu.Lock()
	if _, ok := p.pairs[c]; !ok {
		p.mu.Unlock()
		s.Close()
		return
	}
	p.pairs[c] = s
	p.mu.Unlock()
	go p.pipe(s, c)
	p.pipe(c, s)
}

// pipe copies src to dst while the proxy is not blackholed; during a
// blackhole what was read is held back and never delivered.
func (p *Proxy) pipe(src, dst net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			holed := p.holed
			p.mu.Unlock()
			if holed {
				// Swallow: the peer is gone as far as anyone can tell.
				continue
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break // io.EOF or a closed side: both end the pair
		}
	}
	p.drop(src)
}

func (p *Proxy) drop(c net.Conn) {
	p.mu.Lock()
	if o, ok := p.pairs[c]; ok {
		delete(p.pairs, c)
		if o != nil {
			o.Close()
		}
	}
	for a, b := range p.pairs {
		if b == c {
			delete(p.pairs, a)
			a.Close()
		}
	}
	p.mu.Unlock()
	c.Close()
}
