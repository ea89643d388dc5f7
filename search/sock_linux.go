package search

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
)

// defaultSocketDir is where search sockets are: $XDG_RUNTIME_DIR/sessctl
// (the user's, 0700, on tmpfs), else <sessctl's cache directory>/run.
func defaultSocketDir() (string, error) {
	if d := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(d) {
		return filepath.Join(d, layout.CacheDirName), nil
	}
	d, err := layout.CacheDir()
	if err != nil {
		return "", fmt.Errorf("find the search socket's directory: %w", err)
	}
	return filepath.Join(d, "run"), nil
}

// errNotPrivate is a socket directory or socket others could use.
var errNotPrivate = errors.New("not private to this user")

// checkPrivate refuses fi (of path) unless it is of the kind want, not a
// symbolic link, the user's and closed to group and others.
func checkPrivate(path string, fi fs.FileInfo, want fs.FileMode) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link: %w", path, errNotPrivate)
	case fi.Mode().Type() != want:
		return fmt.Errorf("%s is a %v, not a %v: %w", path, fi.Mode().Type(), want, errNotPrivate)
	case !ok || int(st.Uid) != os.Geteuid():
		return fmt.Errorf("%s belongs to another user: %w", path, errNotPrivate)
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("%s is open to others (mode %v): %w", path, fi.Mode().Perm(), errNotPrivate)
	}
	return nil
}

func checkPrivateDir(dir string) error {
	fi, err := vfs.OS().Lstat(dir) // sockets are the kernel's, on the real filesystem
	if err != nil {
		return err
	}
	return checkPrivate(dir, fi, fs.ModeDir)
}

// listenSock makes the socket path in the private directory dir. A
// socket left there by a server that is gone is replaced; one a server
// answers on is not.
func listenSock(dir, path string) (net.Listener, error) {
	fsys := vfs.OS()
	if err := fsys.MkdirAll(filepath.Dir(dir), vfs.DirMode); err != nil {
		return nil, fmt.Errorf("search socket: %w", err)
	}
	if err := fsys.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("search socket: %w", err)
	}
	if err := checkPrivateDir(dir); err != nil {
		return nil, fmt.Errorf("search socket directory: %w", err)
	}
	if fi, err := fsys.Lstat(path); err == nil {
		if err := checkPrivate(path, fi, fs.ModeSocket); err != nil {
			return nil, fmt.Errorf("search socket: %w", err)
		}
		if c, err := net.DialTimeout("unix", path, 200*time.Millisecond); err == nil {
			_ = c.Close()
			return nil, fmt.Errorf("search socket %s: another sessctl serve answers on it", path)
		}
		if err := fsys.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("search socket: %w", err)
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("search socket: %w", err)
	}
	// The directory keeps others out already; the socket is 0600 too.
	if err := unix.Chmod(path, 0o600); err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("search socket %s: %w", path, os.NewSyscallError("chmod", err))
	}
	return ln, nil
}

// dialSock connects to the socket path in dir, when both are private to
// the user and the process listening is the user's.
func dialSock(ctx context.Context, dir, path string, timeout time.Duration) (net.Conn, error) {
	if err := checkPrivateDir(dir); err != nil {
		return nil, err
	}
	fi, err := vfs.OS().Lstat(path)
	if err != nil {
		return nil, err
	}
	if err := checkPrivate(path, fi, fs.ModeSocket); err != nil {
		return nil, err
	}
	d := net.Dialer{Timeout: timeout}
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	if !peerIsUs(c) {
		_ = c.Close()
		return nil, fmt.Errorf("search socket %s: the server is another user's: %w", path, errNotPrivate)
	}
	return c, nil
}

// peerIsUs reports whether the process at the other end of c runs as
// this process's user (SO_PEERCRED).
func peerIsUs(c net.Conn) bool {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return false
	}
	rc, err := uc.SyscallConn()
	if err != nil {
		return false
	}
	var cred *unix.Ucred
	var cerr error
	if err := rc.Control(func(fd uintptr) { cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) }); err != nil || cerr != nil {
		return false
	}
	return int(cred.Uid) == os.Geteuid()
}
