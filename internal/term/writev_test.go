package term

import (
	"bytes"
	"io"
	"os"
	"testing"
)

// TestWriteBuffers writes many pieces through a pipe, which takes only part
// of a large writev at a time, and through a plain writer; both must give
// the pieces in order, whole.
func TestWriteBuffers(t *testing.T) {
	var bufs [][]byte
	var want []byte
	for i := range 5000 {
		b := bytes.Repeat([]byte{byte('a' + i%26)}, 1+i%700)
		bufs = append(bufs, b, nil)
		want = append(want, b...)
	}
	var plain bytes.Buffer
	if err := WriteBuffers(&plain, bufs); err != nil || !bytes.Equal(plain.Bytes(), want) {
		t.Fatalf("plain writer: %v, %d bytes, want %d", err, plain.Len(), len(want))
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		got <- b
	}()
	if err := WriteBuffers(w, bufs); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("pipe: got %d bytes, want %d (equal prefix %d)", len(b), len(want), commonPrefix(b, want))
	}
	r.Close()
}

func commonPrefix(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
