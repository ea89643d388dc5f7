package textindex

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
)

// pagedFile writes logical bytes as a segment's pages (behind a header's
// room) and returns the file's bytes.
func pagedFile(t *testing.T, logical []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	buf.Write(make([]byte, headerSize))
	pw := newPageWriter(&buf)
	if _, err := pw.Write(logical); err != nil {
		t.Fatal(err)
	}
	if err := pw.close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestReadCopy: readCopy gives the same bytes as read for ranges within
// a page, across pages and in the short last page, from cached pages
// and from the file, into a buffer of the caller's; a range past the
// end, or a damaged page, is an error matching ErrCorrupt.
func TestReadCopy(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	logical := make([]byte, 3*pageSize+1000) // the last page short
	for i := range logical {
		logical[i] = byte(r.IntN(256))
	}
	file := pagedFile(t, logical)
	ranges := [][2]int64{
		{0, 10}, {pageSize - 5, 10}, {pageSize - 5, 2*pageSize + 10}, {3 * pageSize, 1000},
		{3*pageSize + 990, 10}, {0, int64(len(logical))}, {pageSize, pageSize}, {5, 0},
	}
	for _, slots := range []int{0, 1} {
		pr := newPageReader(bytes.NewReader(file), "seg", int64(len(logical)))
		if slots == 1 {
			pr.sequential()
		}
		var dst []byte
		for round := range 2 { // the second from cached pages
			for _, rg := range ranges {
				off, n := rg[0], rg[1]
				want := logical[off : off+n]
				got, err := pr.readCopy(dst, off, n)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("slots %d round %d: readCopy(%d, %d): %d bytes, %v; want %d bytes", slots, round, off, n, len(got), err, n)
				}
				dst = got
				got, err = pr.read(off, n)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("slots %d round %d: read(%d, %d): %d bytes, %v; want %d bytes", slots, round, off, n, len(got), err, n)
				}
			}
		}
		// The last page, cached, is its payload only (not its checksum).
		if pg, err := pr.page(3); err != nil || len(pg) != 1000 {
			t.Errorf("slots %d: the last page cached is %d bytes, %v; want 1000", slots, len(pg), err)
		}
		if _, err := pr.readCopy(nil, int64(len(logical))-5, 10); !errors.Is(err, ErrCorrupt) {
			t.Errorf("slots %d: a range past the end: %v, want ErrCorrupt", slots, err)
		}
		pr.put()
	}
	damaged := bytes.Clone(file)
	damaged[physOff(2)+7] ^= 1
	pr := newPageReader(bytes.NewReader(damaged), "seg", int64(len(logical)))
	defer pr.put()
	if _, err := pr.readCopy(nil, pageSize-5, pageSize); err != nil {
		t.Errorf("pages 0-1 with page 2 damaged: %v", err)
	}
	if _, err := pr.readCopy(nil, 2*pageSize-5, 10); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a range into the damaged page: %v, want ErrCorrupt", err)
	}
}
