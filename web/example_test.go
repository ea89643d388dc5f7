package web_test

import (
	"fmt"
	"net"
	"net/http"

	"github.com/sessctl/sessctl/web"
)

// serve serves the viewer of this machine's stores on ln (the package
// documentation's example).
func serve(ln net.Listener) error {
	h, err := web.New(web.Options{Addr: ln.Addr().String()})
	if err != nil {
		return err
	}
	defer h.Close()
	fmt.Println("open", h.URL()) // http://127.0.0.1:PORT/?token=...
	return http.Serve(ln, h)
}

// An agent mounts the viewer in its own server, on a loopback listener,
// and tells its user the URL.
func Example() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return
	}
	ln.Close() // the example stops here; serve(ln) would serve until the listener closes
	_ = serve
}
