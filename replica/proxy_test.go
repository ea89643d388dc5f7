package replica_test

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// faultProxy is a loopback TCP proxy in front of the real server that
// can drop or stall connections, or call a hook once a number of bytes
// went upstream.
type faultProxy struct {
	l      net.Listener
	target string
	mode   atomic.Value // "pass", "drop", "stall", "cut" (close after cutAt bytes upstream)
	cutAt  atomic.Int64
	up     atomic.Int64 // bytes sent upstream
	hookAt atomic.Int64
	hook   func()
	once   sync.Once
	mu     sync.Mutex
	conns  []net.Conn
}

func newFaultProxy(t testing.TB, target string) *faultProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{l: l, target: target}
	p.mode.Store("pass")
	go p.serve()
	t.Cleanup(func() { l.Close(); p.closeAll() })
	return p
}

func (p *faultProxy) URL() string { return "http://" + p.l.Addr().String() }

func (p *faultProxy) set(mode string) {
	p.mode.Store(mode)
	if mode != "pass" {
		p.closeAll()
	}
}

func (p *faultProxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *faultProxy) track(c net.Conn) {
	p.mu.Lock()
	p.conns = append(p.conns, c)
	p.mu.Unlock()
}

func (p *faultProxy) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.track(c)
		switch p.mode.Load().(string) {
		case "drop":
			c.Close()
			continue
		case "stall":
			continue // never answered; closed by closeAll
		}
		go p.pipe(c)
	}
}

func (p *faultProxy) pipe(c net.Conn) {
	u, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.track(u)
	go func() {
		io.Copy(c, u)
		c.Close()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			total := p.up.Add(int64(n))
			if at := p.hookAt.Load(); at > 0 && total >= at && p.hook != nil {
				p.once.Do(p.hook)
			}
			if p.mode.Load().(string) == "cut" && total >= p.cutAt.Load() {
				break
			}
			if _, werr := u.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	u.Close()
	c.Close()
}
