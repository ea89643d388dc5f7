package engine_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/engine"
)

// CheckOutput judges names: a session's lock, owner record, backups,
// quarantined tails and temporary files are refused whether they exist
// or not, an existing *.jsonl is refused, and so is anything inside an
// AgentUse session directory; other names pass.
func TestCheckOutput(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "old.jsonl")
	if err := os.WriteFile(existing, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	au := filepath.Join(dir, "01JQ3Z5M8X9Y2W4V6T8R0P2N4K-build")
	if err := os.MkdirAll(filepath.Join(au, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(au, "session.lock"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	notAU := filepath.Join(dir, "01JQ3Z5M8X9Y2W4V6T8R0P2N4M-other")
	if err := os.MkdirAll(notAU, 0o700); err != nil {
		t.Fatal(err)
	}
	s := filepath.Join(dir, "s.jsonl")
	refused := []string{
		s + ".lock", s + ".lock.excl", s + ".owner", s + ".v1.bak", s + ".v2.bak.3",
		s + ".torn-1772355600000", s + ".tmp-0123456789abcdef", s + ".owner.tmp-0123456789abcdef",
		s + ".torn-1772355600000.tmp-0123456789abcdef", existing,
		au, filepath.Join(au, "session.json"), filepath.Join(au, "sub", "new.md"),
	}
	for _, p := range refused {
		if err := engine.CheckOutput(p, engine.Options{}); !errors.Is(err, engine.ErrSessionOwned) {
			t.Errorf("CheckOutput(%s) = %v, want ErrSessionOwned", p, err)
		}
	}
	allowed := []string{
		filepath.Join(dir, "new.jsonl"), filepath.Join(dir, "export.md"), s + ".md",
		filepath.Join(dir, "x.lock"), s + ".torn-x", s + ".tmp-short", s + ".vx.bak",
		filepath.Join(notAU, "x.md"),
	}
	for _, p := range allowed {
		if err := engine.CheckOutput(p, engine.Options{}); err != nil {
			t.Errorf("CheckOutput(%s) = %v, want nil", p, err)
		}
	}
}
