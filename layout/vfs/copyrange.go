package vfs

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
)

// ErrCopyMismatch is matched by errors.Is when CopyRange's check of the
// copy found bytes other than the source's.
var ErrCopyMismatch = errors.New("the copy differs from its source")

// CopyRange writes the n bytes of src at offset off into dst at offset
// at, which must be where dst's sequential writes have got to (for a File
// that is not the operating system's, the copy is a sequence of Writes),
// and then checks the copy: it reads both ranges back and
// compares their checksums, so that a filesystem or kernel that copies
// wrongly (a copy offload is a newer and rarer path than a write) fails
// with ErrCopyMismatch instead of leaving a wrong file. Where both are
// files of the operating system the kernel copies (copy_file_range or
// sendfile on Linux), without the bytes passing through the process; any
// other File is copied through a buffer. src's offset may move; its
// content in the range must not change meanwhile (a session file's
// bytes before its end never do). dst must have been opened for reading
// and writing, and not with O_APPEND, for the check.
func CopyRange(dst File, at int64, src File, off, n int64) (int64, error) {
	var (
		copied int64
		err    error
	)
	so, sok := src.(*os.File)
	do, dok := dst.(*os.File)
	if sok && dok {
		if _, err := so.Seek(off, io.SeekStart); err != nil {
			return 0, err
		}
		if _, err := do.Seek(at, io.SeekStart); err != nil {
			return 0, err
		}
		// *os.File's ReadFrom of a LimitedReader over an *os.File is
		// the kernel's copy.
		copied, err = do.ReadFrom(&io.LimitedReader{R: so, N: n})
	} else {
		copied, err = io.Copy(dst, io.NewSectionReader(src, off, n))
	}
	if err != nil {
		return copied, err
	}
	if copied != n {
		return copied, fmt.Errorf("copy %s to %s: %d of %d bytes: %w", src.Name(), dst.Name(), copied, n, io.ErrUnexpectedEOF)
	}
	want, err := rangeSum(src, off, n)
	if err != nil {
		return copied, fmt.Errorf("check copy of %s: %w", src.Name(), err)
	}
	got, err := rangeSum(dst, at, n)
	if err != nil {
		return copied, fmt.Errorf("check copy in %s: %w", dst.Name(), err)
	}
	if !bytes.Equal(want, got) {
		return copied, fmt.Errorf("copy of %s in %s: %w", src.Name(), dst.Name(), ErrCopyMismatch)
	}
	return copied, nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// rangeSum returns the CRC-32C of f's n bytes at off, with the length.
func rangeSum(f File, off, n int64) ([]byte, error) {
	h := crc32.New(castagnoli)
	got, err := io.CopyBuffer(h, io.NewSectionReader(f, off, n), make([]byte, 1<<20))
	if err != nil {
		return nil, err
	}
	if got != n {
		return nil, fmt.Errorf("%s: %d of %d bytes: %w", f.Name(), got, n, io.ErrUnexpectedEOF)
	}
	return h.Sum(nil), nil
}
