package windsurf

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/layout/vfs/vfstest"
	"github.com/sessctl/sessctl/migrate"
)

// TestFaultRead reads a store through ImportOptions.FS, failing the read
// of a conversation with EIO once it is listed: Convert fails with an
// error naming the file and the file is untouched; read again, it
// converts.
func TestFaultRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	file := filepath.Join(dir, "s.json")
	doc := "{\"conversationId\": \"s\", \"cwd\": \"/w\", \"messages\": [\n" +
		"  {\"role\": \"user\", \"content\": \"first\", \"timestamp\": 1770112800000}\n]}\n"
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	ffs := vfstest.NewFaultFS(vfs.OS())
	st, err := Source{}.Open(ctx, dir, migrate.ImportOptions{FS: ffs})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var refs []migrate.Ref
	for ref, err := range st.Sessions(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, ref)
	}
	if len(refs) != 1 || ffs.Calls(vfstest.OpRead) == 0 {
		t.Fatalf("listed %v with %d reads through the FS, want the one conversation, read through it", refs, ffs.Calls(vfstest.OpRead))
	}
	ffs.Inject(vfstest.Fault{Op: vfstest.OpRead, Err: syscall.EIO, Repeat: true})
	if _, err := st.Convert(ctx, refs[0]); !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), file) {
		t.Errorf("convert with an unreadable file: %v, want EIO naming %s", err, file)
	}
	ffs.Clear()
	conv, err := st.Convert(ctx, refs[0])
	if err != nil || len(conv.Sessions) != 1 {
		t.Fatalf("convert once the file reads: %v, %v", conv, err)
	}
	if b, _ := os.ReadFile(file); string(b) != doc {
		t.Errorf("the source changed")
	}
}
