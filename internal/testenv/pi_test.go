package testenv

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestPiVersionsAgree checks that scripts/pi-install.sh installs the
// releases the tests look for: moving the reference means changing both.
func TestPiVersionsAgree(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(RepoRoot(t), "scripts", "pi-install.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"reference": PiVersion, "corpus": PiCorpusVersion} {
		m := regexp.MustCompile(`(?m)^` + name + `=(\S+)$`).FindSubmatch(data)
		if m == nil {
			t.Errorf("pi-install.sh sets no %s=", name)
		} else if string(m[1]) != want {
			t.Errorf("pi-install.sh installs %s %s, the tests want %s", name, m[1], want)
		}
	}
}

func TestPiInstalled(t *testing.T) {
	dir := t.TempDir()
	if v := PiInstalled(dir); v != "" {
		t.Errorf("PiInstalled of an empty folder = %q", v)
	}
	pkg := filepath.Join(dir, "node_modules", "@mariozechner", "pi-coding-agent")
	if err := os.MkdirAll(pkg, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"name":"@mariozechner/pi-coding-agent","version":"9.8.7"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if v := PiInstalled(dir); v != "9.8.7" {
		t.Errorf("PiInstalled = %q, want 9.8.7", v)
	}
	t.Setenv("SESSCTL_PI_MODULES", filepath.Join(dir, "node_modules"))
	if d := PiDir(); d != dir {
		t.Errorf("PiDir with SESSCTL_PI_MODULES naming node_modules = %q, want %q", d, dir)
	}
}
