package replica_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"

	"github.com/sessctl/sessctl/replica"
)

// bucketText returns every object's bytes below the remote, concatenated.
func bucketText(t testing.TB, be *backend, remote string) []byte {
	t.Helper()
	var all []byte
	for _, k := range be.keys(t, remote, "") {
		all = append(all, be.get(t, remote, k)...)
	}
	return all
}

// With an age identity the bucket holds no transcript text; a machine with
// the identity restores the session, one without it is refused.
func TestEncryptedRemote(t *testing.T) { eachBackend(t, testEncryptedRemote) }

func testEncryptedRemote(t *testing.T, be *backend) {
	remote := remoteFor(t, be)
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := newMachine(t, be, remote), newMachine(t, be, remote), newMachine(t, be, remote)
	for _, m := range []*machine{a, b} {
		m.opts.Recipients = []age.Recipient{id.Recipient()}
		m.opts.Identities = []age.Identity{id}
	}
	pa := a.newSession(t, "/secret/proj", 2)
	a.run(t, "push")
	if text := bucketText(t, be, remote); bytes.Contains(text, []byte("question")) || bytes.Contains(text, []byte("/secret/proj")) {
		t.Fatal("the bucket holds transcript text in the clear")
	}
	b.run(t, "pull")
	want, _ := entries(t, pa)
	got, _ := entries(t, sessionFiles(t, b.agentDir)[filepath.Base(pa)])
	if len(got) != len(want) {
		t.Fatalf("b restored %d entries, want %d", len(got), len(want))
	}
	_, err = c.remote(t).Pull(context.Background())
	if !errors.Is(err, replica.ErrEncrypted) {
		t.Fatalf("pull without the identity: %v, want ErrEncrypted", err)
	}
	if rep := b.run(t, "sync"); moved(rep) != 0 {
		t.Errorf("a further sync moved %d bytes", moved(rep))
	}
}

// Transform (the CLI's --redact) is applied to every line uploaded; it
// failing uploads nothing of the session; pulling the redacted copy back
// is no conflict.
func TestTransformRedacts(t *testing.T) { eachBackend(t, testTransformRedacts) }

func testTransformRedacts(t *testing.T, be *backend) {
	remote := remoteFor(t, be)
	a := newMachine(t, be, remote)
	pa := a.newSession(t, "/r/x", 2)
	fail := true
	a.opts.Transform = func(line []byte) ([]byte, error) {
		if fail && bytes.Contains(line, []byte("answer 1")) {
			return nil, errors.New("cannot redact")
		}
		return bytes.ReplaceAll(line, []byte("question"), []byte("[REDACTED]")), nil
	}
	rep, err := a.remote(t).Push(context.Background())
	if err != nil || rep.Sessions[0].Err == nil {
		t.Fatalf("push with a failing transform: %v %+v", err, rep.Sessions)
	}
	if text := bucketText(t, be, remote); bytes.Contains(text, []byte("answer")) {
		t.Fatal("a session whose transform failed was uploaded")
	}
	fail = false
	a.run(t, "push")
	if text := bucketText(t, be, remote); bytes.Contains(text, []byte("question")) || !bytes.Contains(text, []byte("[REDACTED]")) {
		t.Fatal("the bucket holds untransformed lines")
	}
	rep = a.run(t, "sync")
	if len(rep.Sessions[0].Conflicts) != 0 {
		t.Errorf("pulling the redacted copy back made conflicts: %+v", rep.Sessions[0].Conflicts)
	}
	es, _ := entries(t, pa)
	for _, l := range es {
		if strings.Contains(l, "[REDACTED]") {
			t.Errorf("the local file was redacted: %s", l)
		}
	}
}

// A transform may lengthen lines past the manifest's inline bound, which
// the plan took from the local lengths: the lines that went into a data
// object are kept with those left inline, and a pull gets every entry.
func TestTransformOutgrowsInline(t *testing.T) { eachBackend(t, testTransformOutgrowsInline) }

func testTransformOutgrowsInline(t *testing.T, be *backend) {
	remote := remoteFor(t, be)
	a := newMachine(t, be, remote)
	pa := a.newSession(t, "/r/grow", 3)
	pad := `"pad":"` + strings.Repeat("p", 40<<10) + `",`
	a.opts.Transform = func(line []byte) ([]byte, error) {
		return bytes.Replace(line, []byte(`{"type":`), []byte(`{`+pad+`"type":`), 1), nil
	}
	a.run(t, "push")
	b := newMachine(t, be, remote)
	b.run(t, "pull")
	local, _ := entries(t, pa)
	files := sessionFiles(t, b.agentDir)
	if len(files) != 1 {
		t.Fatalf("pulled %d sessions", len(files))
	}
	for _, p := range files {
		pulled, _ := entries(t, p)
		if len(pulled) != len(local) {
			t.Fatalf("pulled %d entries of %d", len(pulled), len(local))
		}
		for id, l := range pulled {
			if !strings.Contains(l, pad) {
				t.Errorf("entry %s was not transformed: %.80s", id, l)
			}
		}
	}
}
