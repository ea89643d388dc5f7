//go:build linux && !(amd64 || arm64)

package vfs

import "golang.org/x/sys/unix"

// fstatatNoFollow is fstatat(fd, name, st, AT_SYMLINK_NOFOLLOW); buf is
// not used (fstatat_linux_fast.go's reason for it).
func fstatatNoFollow(fd int, name string, st *unix.Stat_t, buf []byte) ([]byte, error) {
	return buf, unix.Fstatat(fd, name, st, unix.AT_SYMLINK_NOFOLLOW)
}
