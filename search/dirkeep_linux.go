package search

import "golang.org/x/sys/unix"

// keepsListings reports whether dir lies on a filesystem whose
// directories' modification and change times change with every entry
// made, removed or renamed, and are read from the disk, not a client's
// cache: Linux's local filesystems (dirCache).
func keepsListings(dir string) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return false
	}
	switch uint32(st.Type) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC,
		unix.TMPFS_MAGIC, unix.F2FS_SUPER_MAGIC:
		return true
	}
	return false
}
