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
