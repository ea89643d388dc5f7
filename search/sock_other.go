//go:build !linux

package search

import (
	"context"
	"errors"
	"net"
	"time"
)

// The search socket is made on Linux only, where the watch is (the
// server's index is no fresher than a search's own without it): Listen
// fails here, and Ask finds no server.

var errNoSocket = errors.New("no search socket on this system")

func defaultSocketDir() (string, error) { return "", errNoSocket }

func listenSock(string, string) (net.Listener, error) { return nil, errNoSocket }

func dialSock(context.Context, string, string, time.Duration) (net.Conn, error) {
	return nil, errNoSocket
}

func peerIsUs(net.Conn) bool { return false }
