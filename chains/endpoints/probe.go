package endpoints

import (
	"context"
	"sync"
	"time"
)

// Probes are a chain client's own reads, which the pool asks of each
// endpoint in turn to learn its head and chain.
type Probes struct {
	// Head reads the endpoint's head (the client's Tip).
	Head func(ctx context.Context) (int64, error)
	// Chain returns what the endpoint runs when that is not the configured
	// chain, "" when it is; an error is a failure to ask. Nil: not checked.
	Chain func(ctx context.Context) (string, error)
}

// Probe asks every endpoint for its head (and, when chain is set, its
// chain) at once, each within timeout. A failure is recorded by the
// transport as the endpoint's; Probe returns when all have answered.
func (p *Pool) Probe(ctx context.Context, pr Probes, chain bool, timeout time.Duration) {
	var wg sync.WaitGroup
	for _, name := range p.Names() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.probe(ctx, name, pr, chain, timeout)
		}()
	}
	wg.Wait()
}

// probe asks endpoint name for its head (and chain).
func (p *Pool) probe(ctx context.Context, name string, pr Probes, chain bool, timeout time.Duration) {
	pctx, cancel := context.WithTimeout(on(ctx, name), timeout)
	defer cancel()
	if chain && pr.Chain != nil {
		what, err := pr.Chain(pctx)
		if err != nil {
			return
		}
		p.setWrongChain(name, what)
	}
	if pr.Head == nil {
		return
	}
	if h, err := pr.Head(pctx); err == nil {
		p.observeHead(name, h)
	}
}

// Run probes every endpoint now and then every interval on the pool's
// clock (the chain each tenth time), each endpoint on its own so a slow or
// backed-off one delays no other, until ctx ends. It returns nil when ctx
// ends.
func (p *Pool) Run(ctx context.Context, pr Probes, every time.Duration) error {
	timeout := max(every, 5*time.Second)
	var wg sync.WaitGroup
	for _, name := range p.Names() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				if i%10 == 0 || !p.headSeenWithin(name, every) {
					// An endpoint serving the scanner's tip reads is
					// not asked again.
					p.probe(ctx, name, pr, i%10 == 0, timeout)
				}
				t := p.clk.NewTimer(every)
				select {
				case <-ctx.Done():
					t.Stop()
					return
				case <-t.C:
				}
			}
		}()
	}
	wg.Wait()
	return nil
}
