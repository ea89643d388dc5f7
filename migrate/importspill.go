package migrate

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"

	"github.com/sessctl/sessctl/layout/vfs"
)

// spillAt is how many bytes of entry content a Builder holds in memory;
// past it the content of every entry goes to a temporary file, so that
// converting a large session (a rollout of gigabytes) costs memory for
// the number of its entries but not for their bytes. A variable for the
// tests.
var spillAt int64 = 4 << 20

// spill is the temporary file a Builder keeps entry content in, and the
// converted session's lines after Finish. It is removed as soon as it is
// created (the open descriptor keeps it), so that nothing is left behind
// when the process is killed; Close closes it.
type spill struct {
	f    vfs.File
	w    *bufio.Writer
	size int64
	path string
	err  error // the first write error; every later use returns it
}

func newSpill(dir string) (*spill, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	path := vfs.TempName(filepath.Join(dir, "sessctl-import"))
	f, err := vfs.OS().OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|vfs.NoFollow, vfs.FileMode)
	if err != nil {
		return nil, fmt.Errorf("create temporary file for an import: %w", err)
	}
	sp := &spill{f: f, w: bufio.NewWriterSize(f, 1<<20), path: path}
	// A session nobody closes still gives its descriptor back.
	runtime.AddCleanup(sp, func(f vfs.File) { _ = f.Close() }, f)
	if vfs.OS().Remove(path) == nil {
		sp.path = ""
	}
	return sp, nil
}

// put appends b and returns its offset.
func (s *spill) put(b []byte) int64 {
	off := s.size
	if s.err != nil {
		return off
	}
	if _, err := s.w.Write(b); err != nil {
		s.err = fmt.Errorf("write temporary file %s: %w", s.f.Name(), err)
	}
	s.size += int64(len(b))
	return off
}

// get returns n bytes at off.
func (s *spill) get(off int64, n int) ([]byte, error) {
	if err := s.flush(); err != nil {
		return nil, err
	}
	b := make([]byte, n)
	if _, err := s.f.ReadAt(b, off); err != nil {
		return nil, fmt.Errorf("read temporary file %s: %w", s.f.Name(), err)
	}
	return b, nil
}

func (s *spill) flush() error {
	if s.err == nil {
		if err := s.w.Flush(); err != nil {
			s.err = fmt.Errorf("write temporary file %s: %w", s.f.Name(), err)
		}
	}
	return s.err
}

// section returns a reader of n bytes at off.
func (s *spill) section(off, n int64) (io.Reader, error) {
	if err := s.flush(); err != nil {
		return nil, err
	}
	return io.NewSectionReader(s.f, off, n), nil
}

func (s *spill) Close() error {
	err := s.f.Close()
	if s.path != "" {
		if rerr := vfs.OS().Remove(s.path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
			err = rerr
		}
	}
	return err
}

// spilled is where a node's content is in the spill file: its message,
// data, details and summary one after another; a length of -1 is nil.
type spilled struct {
	off                          int64
	nMsg, nData, nDetails, nSumm int32
}

func spillLen(b []byte) int32 {
	if b == nil {
		return -1
	}
	return int32(len(b))
}

// contentSize is the number of content bytes n holds in memory.
func (n *Node) contentSize() int64 {
	size := int64(len(n.msg) + len(n.data))
	if n.nodeExtra != nil {
		size += int64(len(n.details) + len(n.summary))
	}
	return size
}

// hold keeps n's content: in memory while the session is small, in the
// spill file once it is not (see spillAt). A spill file that cannot be
// created leaves the content in memory.
func (b *Builder) hold(n *Node) {
	if b.sp == nil {
		b.held += n.contentSize()
		if b.held <= spillAt || b.noSpill {
			return
		}
		sp, err := newSpill(b.tempDir)
		if err != nil {
			b.noSpill = true
			return
		}
		b.sp = sp
		for _, m := range b.nodes {
			b.spillNode(m)
		}
		return
	}
	b.spillNode(n)
}

func (b *Builder) spillNode(n *Node) {
	s := &spilled{nMsg: spillLen(n.msg), nData: spillLen(n.data), nDetails: -1}
	s.off = b.sp.put(n.msg)
	b.sp.put(n.data)
	if x := n.nodeExtra; x != nil {
		s.nDetails, s.nSumm = spillLen(x.details), int32(len(x.summary))
		b.sp.put(x.details)
		b.sp.put([]byte(x.summary))
		x.details, x.summary = nil, ""
	}
	n.sp = s
	n.msg, n.data = nil, nil
}

// content returns n with its content back in memory, for encoding its
// line.
func (b *Builder) content(n *Node) (*Node, error) {
	if n.sp == nil {
		return n, nil
	}
	s := n.sp
	total := 0
	for _, l := range []int32{s.nMsg, s.nData, s.nDetails, s.nSumm} {
		if l > 0 {
			total += int(l)
		}
	}
	buf, err := b.sp.get(s.off, total)
	if err != nil {
		return nil, err
	}
	take := func(l int32) []byte {
		if l < 0 {
			return nil
		}
		out := buf[:l:l]
		buf = buf[l:]
		return out
	}
	c := *n
	c.msg, c.data = take(s.nMsg), take(s.nData)
	if n.nodeExtra != nil {
		x := *n.nodeExtra
		x.details, x.summary = take(s.nDetails), string(take(s.nSumm))
		c.nodeExtra = &x
	}
	return &c, nil
}
