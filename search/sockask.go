package search

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net"
	"path/filepath"
	"time"
)

// How long a client waits for a server: to connect and read its hello,
// and for each message of its answer (a server at work says "wait"
// every second).
const (
	sockHelloTimeout = time.Second
	sockMsgTimeout   = 30 * time.Second
)

// Ask sends the search q to the search server (Server) of the index o
// names, when one is running for it and answers for q's stores, and
// returns its hits, which are the hits the search would find by itself
// (Index.Search), in the same order. It returns false (then search as
// usual) when there is none, its socket is not private to the user, it
// speaks another version, does not answer in time, refuses, covers other
// stores or fails before its first hit; with o.NoIndex or o.Rebuild; and
// with o.FS set. o.Warn and o.Progress are called as by Index.Search.
// The iterator may be ranged over once.
func Ask(ctx context.Context, o Options, q Query) (iter.Seq2[Hit, error], bool) {
	return ask(ctx, o, "", q)
}

func ask(ctx context.Context, o Options, sockDir string, q Query) (iter.Seq2[Hit, error], bool) {
	if o.NoIndex || o.Rebuild || o.FS != nil || len(q.Stores) == 0 {
		return nil, false
	}
	stores, err := sockPlaces(q.Stores, false)
	if err != nil {
		return nil, false
	}
	for _, p := range stores {
		if r := string(p.Root); !filepath.IsAbs(r) || filepath.Clean(r) != r {
			return nil, false
		}
	}
	dir, err := resolveDir(o.Dir)
	if err != nil {
		return nil, false
	}
	if sockDir == "" {
		if sockDir, err = defaultSocketDir(); err != nil {
			return nil, false
		}
	}
	engine := o.Engine
	if engine == EngineDefault {
		engine = defaultEngine
	}
	c, err := dialSock(ctx, sockDir, filepath.Join(sockDir, sockName(dir)), sockHelloTimeout)
	if err != nil {
		return nil, false
	}
	a := &asked{c: c, r: bufio.NewReaderSize(c, 64<<10)}
	seq, ok := a.start(ctx, o, dir, engine, stores, q)
	if !ok {
		_ = c.Close()
	}
	return seq, ok
}

// asked is a client's connection to a server.
type asked struct {
	c net.Conn
	r *bufio.Reader
}

// read returns the next line, of at most maxSockMsg bytes, within d.
func (a *asked) read(d time.Duration, v any) error {
	_ = a.c.SetReadDeadline(time.Now().Add(d))
	var line []byte
	for {
		part, err := a.r.ReadSlice('\n')
		line = append(line, part...)
		if err == nil {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
		if len(line) > maxSockMsg {
			return errors.New("a message too long")
		}
	}
	return json.Unmarshal(line, v)
}

// start checks the server's hello, sends the request and reads the
// answer up to its first hit, error or end; ok is false when the client
// is to search by itself.
func (a *asked) start(ctx context.Context, o Options, dir string, engine Engine, stores []sockPlace, q Query) (iter.Seq2[Hit, error], bool) {
	var hello sockHello
	if err := a.read(sockHelloTimeout, &hello); err != nil || hello.Proto != sockProto || hello.V != sockVersion ||
		string(hello.Dir) != dir || !covers(hello.Stores, stores) {
		return nil, false
	}
	req, err := json.Marshal(sockRequest{V: sockVersion, Engine: engine.String(), Stores: stores, Query: toSockQuery(q)})
	if err != nil || len(req) >= maxSockRequest {
		return nil, false
	}
	_ = a.c.SetWriteDeadline(time.Now().Add(sockHelloTimeout))
	if _, err := a.c.Write(append(req, '\n')); err != nil {
		return nil, false
	}
	stop := context.AfterFunc(ctx, func() { _ = a.c.SetDeadline(time.Now()) })
	var warns []string // told once the server's answer is taken
	var first sockMsg
	for {
		first = sockMsg{}
		if err := a.read(sockMsgTimeout, &first); err != nil {
			stop()
			return nil, false
		}
		switch first.T {
		case "wait":
			continue
		case "prog":
			if o.Progress != nil {
				o.Progress(first.Done, first.Total)
			}
			continue
		case "warn":
			warns = append(warns, string(first.Msg))
			continue
		case "hit", "end":
		default: // "refuse"; an error, which the client's own search words as it would
			stop()
			return nil, false
		}
		break
	}
	if o.Warn != nil {
		for _, w := range warns {
			o.Warn(errors.New(w))
		}
	}
	return func(yield func(Hit, error) bool) {
		defer stop()
		defer a.c.Close()
		m := first
		for {
			switch m.T {
			case "end":
				return
			case "hit":
				if m.Hit == nil {
					yield(Hit{}, fmt.Errorf("search server %s: a hit without its text", a.c.RemoteAddr()))
					return
				}
				h, err := m.Hit.hit()
				if !yield(h, err) || err != nil {
					return
				}
			case "err":
				yield(Hit{}, m.err())
				return
			case "warn":
				if o.Warn != nil {
					o.Warn(errors.New(string(m.Msg)))
				}
			case "prog":
				if o.Progress != nil {
					o.Progress(m.Done, m.Total)
				}
			}
			m = sockMsg{}
			if err := a.read(sockMsgTimeout, &m); err != nil {
				if ctx.Err() != nil {
					err = ctx.Err()
				}
				yield(Hit{}, fmt.Errorf("search server stopped answering: %w", err))
				return
			}
		}
	}, true
}
