package testenv

// Running pi's own SessionManager to write random sessions and to report
// its view of them, for the differential tests.

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// PiGenerate runs scripts/pi-gen.mjs: count random sessions written by
// the pi installed in modules (see Pi), into dir, from seed. The same seed
// gives the same files. It returns their paths in order.
func PiGenerate(t testing.TB, node, modules, dir string, seed, count int) []string {
	t.Helper()
	script := filepath.Join(RepoRoot(t), "scripts", "pi-gen.mjs")
	cmd := exec.Command(node, script, modules, dir, strconv.Itoa(seed), strconv.Itoa(count))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pi-gen.mjs: %v\n%s", err, stderr.Bytes())
	}
	var files []string
	if err := json.Unmarshal(out, &files); err != nil {
		t.Fatalf("pi-gen.mjs printed %q: %v", out, err)
	}
	if len(files) != count {
		t.Fatalf("pi-gen.mjs wrote %d sessions, want %d", len(files), count)
	}
	return files
}

// PiReference runs scripts/pi-reference.mjs with the request req
// (encoded as JSON; see the script for its members) against the pi
// installed in modules, and decodes pi's answer into answer.
func PiReference(t testing.TB, node, modules string, req, answer any) {
	t.Helper()
	in, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(RepoRoot(t), "scripts", "pi-reference.mjs")
	cmd := exec.Command(node, script, modules)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pi-reference.mjs: %v\n%s", err, stderr.Bytes())
	}
	if err := json.Unmarshal(out, answer); err != nil {
		t.Fatalf("pi-reference.mjs answer: %v", err)
	}
}
