//go:build unix

package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"strconv"
	"syscall"

	"github.com/sessctl/sessctl/internal/human"
)

// ownerHint says how to get back a file that err (a permission error)
// names when another user owns it: typically a lock file or a new file
// a command run as root (sudo) made before sessctl gave such files the
// session's owner. "" when the file is the user's own or gone.
func ownerHint(err error) string {
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return ""
	}
	fi, lerr := os.Lstat(pe.Path)
	if lerr != nil {
		return ""
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) == os.Geteuid() {
		return ""
	}
	owner := "uid " + strconv.Itoa(int(st.Uid))
	if u, err := user.LookupId(strconv.Itoa(int(st.Uid))); err == nil {
		owner = u.Username
	}
	me := strconv.Itoa(os.Geteuid())
	if u, err := user.Current(); err == nil {
		me = u.Username
	}
	group := strconv.Itoa(os.Getegid())
	if g, err := user.LookupGroupId(group); err == nil {
		group = g.Name
	}
	return fmt.Sprintf("%s belongs to %s, not to you (a command run as %s, e.g. with sudo, may have made it); give it back with: sudo chown %s:%s %s",
		human.QuotePath(pe.Path), owner, owner, me, group, human.ShellQuote(pe.Path))
}
