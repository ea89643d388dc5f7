package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/sessctl/sessctl/internal/human"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/search"
	"github.com/sessctl/sessctl/web"
)

var serveCommand = &command{
	name:    "serve",
	summary: "browse sessions in a web browser: live, with the tree, fork and branch",
	usage:   helpText("serve"),
}

func init() { register(serveCommand).run = runServe }

func runServe(e *env, args []string) int {
	fs := e.flags(serveCommand)
	addr := fs.String("addr", "127.0.0.1:0", "listen on `HOST:PORT` (port 0: a free port)")
	var stores storesValue
	fs.Var(&stores, "store", "show `STORE`: pi, indusagi, agentuse or a directory (repeatable; default: every store of this machine)")
	indexDir := fs.String("index-dir", "", "keep the search index in `DIR` (default: the user cache directory)")
	if code := e.parse(serveCommand, fs, args); code >= 0 {
		return code
	}
	if fs.NArg() != 0 {
		return e.usageError("unexpected argument %s", human.Quote(fs.Arg(0)))
	}
	var ss []layout.Place
	for _, n := range stores {
		ps, err := storePlaces(n)
		if err != nil {
			return e.fail(err)
		}
		if n == layout.PlaceAll {
			ps = existingPlaces(ps)
		}
		ss = append(ss, ps...)
	}
	if ss == nil {
		var err error
		if ss, err = web.DefaultStores(); err != nil {
			return e.fail(err)
		}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return e.fail(fmt.Errorf("listen on %s: %w", *addr, err))
	}
	defer ln.Close()
	h, err := web.New(web.Options{Addr: ln.Addr().String(), Stores: ss, IndexDir: *indexDir,
		DamagedHint: "'sessctl verify FILE' names the damage; 'sessctl repair FILE' salvages it into a new file.",
		Logf:        func(format string, a ...any) { fmt.Fprintf(e.stderr, "sessctl serve: "+format+"\n", a...) }})
	if err != nil {
		return e.fail(err)
	}
	// 'sessctl search' in other processes asks this one, over a private
	// unix socket, when it searches these stores with this index.
	if ssrv, err := search.Listen(search.ServerOptions{Stores: ss, Dir: *indexDir}); err != nil {
		fmt.Fprintf(e.stderr, "sessctl serve: 'sessctl search' is not answered here (it searches by itself): %v\n", err)
	} else {
		go func() { _ = ssrv.Serve() }()
		defer ssrv.Close()
	}
	if !web.IsLoopback(ln.Addr().String()) {
		fmt.Fprintf(e.stderr, "sessctl: serve: listening on %s, which is not a loopback address: anyone who can reach it and has the URL below can read and change your sessions\n", ln.Addr())
	}
	fmt.Fprintf(e.stdout, "sessctl serve: open %s\n", h.URL())
	fmt.Fprintf(e.stdout, "(the token in the URL is needed for every page; stop with Ctrl-C)\n")
	if f, ok := e.stdout.(interface{ Flush() error }); ok {
		_ = f.Flush()
	}
	// No write timeout: a live page's event stream stays open.
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case <-e.ctx.Done():
	case err := <-served:
		_ = h.Close()
		if !errors.Is(err, http.ErrServerClosed) {
			return e.fail(err)
		}
		return exitOK
	}
	// Live pages' streams end with the handler; then the server stops.
	_ = h.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	fmt.Fprintf(e.stderr, "sessctl serve: stopped (%v)\n", context.Cause(e.ctx))
	return exitOK
}
