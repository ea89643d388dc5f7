package testenv

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestPiVersionsAgree checks that scripts/pi-install.sh installs the
// releases the tests look for: moving the reference means changing both.
func TestPiVersionsAgree(t *testing.T) {
	t.Parallel()
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
	// From 1.0 on pi is @earendil-works/pi-coding-agent; a folder holding
	// both names (the reference's, once moved) reports the new one.
	pkg = filepath.Join(dir, "node_modules", "@earendil-works", "pi-coding-agent")
	if err := os.MkdirAll(pkg, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"name":"@earendil-works/pi-coding-agent","version":"10.1.2"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if v := PiInstalled(dir); v != "10.1.2" {
		t.Errorf("PiInstalled with both names = %q, want 10.1.2", v)
	}
	if d := PiPackageDir(dir); d != pkg {
		t.Errorf("PiPackageDir = %q, want %q", d, pkg)
	}
	if v := piInstalledAs(dir, PiPackage("0.73.1")); v != "9.8.7" {
		t.Errorf("the @mariozechner package beside it = %q, want 9.8.7", v)
	}
	t.Setenv("SESSCTL_PI_MODULES", filepath.Join(dir, "node_modules"))
	if d := PiDir(); d != dir {
		t.Errorf("PiDir with SESSCTL_PI_MODULES naming node_modules = %q, want %q", d, dir)
	}
}

// TestPiCompatCoversPiTests checks that scripts/pi-compat.sh runs every
// test that runs the reference pi (calls testenv.Pi), in its package.
func TestPiCompatCoversPiTests(t *testing.T) {
	t.Parallel()
	root := RepoRoot(t)
	script, err := os.ReadFile(filepath.Join(root, "scripts", "pi-compat.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^tests='\^\(([^)]*)\)\$'$`).FindSubmatch(script)
	if m == nil {
		t.Fatal("pi-compat.sh has no tests='^(...)$' line")
	}
	listed := map[string]bool{}
	for _, n := range strings.Split(string(m[1]), "|") {
		listed[n] = true
	}
	funcName := regexp.MustCompile(`^(Test\w+)\(`)
	found := 0
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || strings.HasPrefix(d.Name(), ".bench") || p == filepath.Join(root, "internal", "testenv")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		for _, fn := range strings.Split(string(data), "\nfunc ")[1:] {
			name := funcName.FindStringSubmatch(fn)
			if name == nil || !strings.Contains(fn, "testenv.Pi(") {
				continue
			}
			found++
			if !listed[name[1]] {
				t.Errorf("%s (%s) runs pi but pi-compat.sh does not run it", name[1], rel)
			}
			if !strings.Contains(string(script), "./"+filepath.ToSlash(rel)+"/") {
				t.Errorf("pi-compat.sh does not test package ./%s/ (%s)", rel, name[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Error("found no test that calls testenv.Pi")
	}
}
