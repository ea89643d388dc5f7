package vfs

import (
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/windows"
)

// rename replaces newname with oldname. It first renames with POSIX
// semantics (SetFileInformationByHandle, FileRenameInfoEx with
// FILE_RENAME_FLAG_REPLACE_IF_EXISTS|FILE_RENAME_FLAG_POSIX_SEMANTICS;
// Windows 10 1809 and later, on NTFS): that replaces a file other
// handles hold open with delete sharing, which sessctl's and Node's
// opens allow, and those handles keep reading the old file, as on
// POSIX. Where that is not available (older Windows, FAT, wine before
// 9.0) it is os.Rename, MoveFileEx with MOVEFILE_REPLACE_EXISTING, which
// refuses to replace a file that is open at all.
func rename(oldname, newname string) error {
	if err := renamePOSIX(oldname, newname); err == nil {
		return nil
	}
	return os.Rename(oldname, newname)
}

func renamePOSIX(oldname, newname string) error {
	to, err := filepath.Abs(newname)
	if err != nil {
		return err
	}
	to16, err := windows.UTF16FromString(verbatim(to))
	if err != nil {
		return err
	}
	from16, err := windows.UTF16PtrFromString(fixLongPath(oldname))
	if err != nil {
		return err
	}
	h, err := windows.CreateFile(from16, windows.DELETE|windows.SYNCHRONIZE,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_FLAG_OPEN_REPARSE_POINT|windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	// FILE_RENAME_INFO: Flags (4 bytes, padded to 8), RootDirectory
	// (a handle), FileNameLength in bytes (4), then the name.
	const nameOff = 8 + 8 + 4
	buf := make([]byte, nameOff+2*len(to16))
	const replaceIfExists, posixSemantics = 0x1, 0x2
	*(*uint32)(unsafe.Pointer(&buf[0])) = replaceIfExists | posixSemantics
	*(*uint32)(unsafe.Pointer(&buf[16])) = uint32(2 * (len(to16) - 1))
	for i, c := range to16 {
		*(*uint16)(unsafe.Pointer(&buf[nameOff+2*i])) = c
	}
	return windows.SetFileInformationByHandle(h, windows.FileRenameInfoEx, &buf[0], uint32(len(buf)))
}

// verbatim gives an absolute path the \\?\ prefix (\\?\UNC\ for a UNC
// path), so that it is passed on unchanged and may be long.
func verbatim(p string) string {
	switch {
	case len(p) >= 4 && (p[:4] == `\\?\` || p[:4] == `\??\`):
		return p
	case len(p) >= 2 && p[:2] == `\\`:
		return `\\?\UNC\` + p[2:]
	}
	return `\\?\` + p
}
