package clienttest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/replica"
)

// put writes data with one of the Client's writes.
func put(ctx context.Context, c replica.Client, how, key, data string) (replica.ObjectInfo, error) {
	switch how {
	case "Put":
		return c.Put(ctx, key, strings.NewReader(data), int64(len(data)))
	case "PutIfAbsent":
		return c.PutIfAbsent(ctx, key, strings.NewReader(data), int64(len(data)))
	}
	panic(how)
}

// Read returns the object's bytes and what Get said of it, failing t
// when the bytes cannot be read or disagree with what Get said.
func Read(t *testing.T, c replica.Client, key string) ([]byte, replica.ObjectInfo, error) {
	t.Helper()
	rc, info, err := c.Get(context.Background(), key)
	if err != nil {
		return nil, info, err
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	if int64(len(data)) != info.Size || info.Key != key {
		t.Errorf("get %s: %d bytes, info %+v", key, len(data), info)
	}
	return data, info, nil
}

// mustHold fails unless the object holds want.
func mustHold(t *testing.T, c replica.Client, key, want string) replica.ObjectInfo {
	t.Helper()
	data, info, err := Read(t, c, key)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	if string(data) != want {
		t.Fatalf("get %s: %q, want %q", key, data, want)
	}
	return info
}

// mustBeMissing fails unless Get says ErrObjectNotFound.
func mustBeMissing(t *testing.T, c replica.Client, key string) {
	t.Helper()
	if _, _, err := Read(t, c, key); !errors.Is(err, replica.ErrObjectNotFound) {
		t.Fatalf("get %s: %v, want ErrObjectNotFound", key, err)
	}
}

// ListKeys lists the keys below prefix, and what the listing said of
// them, failing t on a listing error.
func ListKeys(t *testing.T, c replica.Client, prefix string) ([]string, []replica.ObjectInfo) {
	t.Helper()
	var keys []string
	var infos []replica.ObjectInfo
	for o, err := range c.List(context.Background(), prefix) {
		if err != nil {
			t.Fatalf("list %q: %v", prefix, err)
		}
		keys = append(keys, o.Key)
		infos = append(infos, o)
	}
	return keys, infos
}

// onlyReader hides every method of a reader but Read.
type onlyReader struct{ io.Reader }

// atReader has Read and ReadAt, not Seek.
type atReader struct {
	io.Reader
	io.ReaderAt
}

// shortReaders are readers of 5 bytes of several kinds.
func shortReaders() map[string]io.Reader {
	s := strings.NewReader("12345")
	return map[string]io.Reader{
		"a reader":             onlyReader{strings.NewReader("12345")},
		"a reader with ReadAt": atReader{s, s},
		"a seekable ReaderAt":  strings.NewReader("12345"),
	}
}

// Conformance holds a Client to the contract of replica.Client: reading
// back what was written with its ETag, a missing object being
// ErrObjectNotFound, exactly one winner of concurrent creates and of
// concurrent compare-and-swaps, listings in key order by string prefix,
// idempotent deletes, a short reader writing nothing, a reader keeping
// the version it opened, and a missing bucket or directory being
// ErrNoBucket and never created. fresh makes a new empty remote's
// Client; missing one whose bucket or directory does not exist.
func Conformance(t *testing.T, fresh, missing func(t *testing.T) replica.Client) {
	mk := maker{fresh, missing}
	for _, c := range []struct {
		name string
		run  func(t *testing.T, ctx context.Context, mk maker)
	}{
		{"get of a missing object", confGetOfAMissingObject},
		{"create and read back", confCreateAndReadBack},
		{"create refuses an existing key", confCreateRefusesAnExistingKey},
		{"concurrent creates: one wins", confConcurrentCreatesOneWins},
		{"replace", confReplace},
		{"compare and swap", confCompareAndSwap},
		{"concurrent swaps: one wins", confConcurrentSwapsOneWins},
		{"list", confList},
		{"delete", confDelete},
		{"a short reader writes nothing", confAShortReaderWritesNothing},
		{"a reader keeps its version", confAReaderKeepsItsVersion},
		{"a missing bucket", confAMissingBucket},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, context.Background(), mk) })
	}
}

// maker makes the Clients of a case: of a new empty remote (fresh), of
// one whose bucket or directory does not exist (missing).
type maker struct {
	fresh, missing func(t *testing.T) replica.Client
}

// confGetOfAMissingObject is Conformance's case "get of a missing object".
func confGetOfAMissingObject(t *testing.T, ctx context.Context, mk maker) {
	c := mk.fresh(t)
	mustBeMissing(t, c, "m/pi/x.jsonl/0000000001")
	if _, err := c.PutIfMatch(ctx, "lease", strings.NewReader("x"), 1, "0123"); !errors.Is(err, replica.ErrObjectNotFound) {
		t.Errorf("PutIfMatch of a missing object: %v, want ErrObjectNotFound", err)
	}
	mustBeMissing(t, c, "lease")
}

// confCreateAndReadBack is Conformance's case "create and read back".
func confCreateAndReadBack(t *testing.T, ctx context.Context, mk maker) {
	c := mk.fresh(t)
	for _, how := range []string{"Put", "PutIfAbsent"} {
		key := "d/" + how
		info, err := put(ctx, c, how, key, "hello "+how)
		if err != nil {
			t.Fatalf("%s: %v", how, err)
		}
		got := mustHold(t, c, key, "hello "+how)
		if info.ETag == "" || got.ETag != info.ETag || got.Size != int64(len("hello "+how)) || got.ModTime.IsZero() {
			t.Errorf("%s returned %+v, Get %+v: want the same ETag, the size and a time", how, info, got)
		}
	}
	if _, err := put(ctx, c, "Put", "empty", ""); err != nil {
		t.Fatal(err)
	}
	mustHold(t, c, "empty", "")
	// An object larger than a read buffer streams whole.
	big := strings.Repeat("0123456789abcdef", 1<<16)
	if _, err := put(ctx, c, "PutIfAbsent", "d/big", big); err != nil {
		t.Fatal(err)
	}
	mustHold(t, c, "d/big", big)
}

// confCreateRefusesAnExistingKey is Conformance's case "create refuses an existing key".
func confCreateRefusesAnExistingKey(t *testing.T, ctx context.Context, mk maker) {
	c := mk.fresh(t)
	if _, err := put(ctx, c, "PutIfAbsent", "sessctl-replica.json", "first"); err != nil {
		t.Fatal(err)
	}
	if _, err := put(ctx, c, "PutIfAbsent", "sessctl-replica.json", "second"); !errors.Is(err, replica.ErrObjectExists) {
		t.Fatalf("second PutIfAbsent: %v, want ErrObjectExists", err)
	}
	mustHold(t, c, "sessctl-replica.json", "first")
}

// confConcurrentCreatesOneWins is Conformance's case "concurrent creates: one wins".
func confConcurrentCreatesOneWins(t *testing.T, ctx context.Context, mk maker) {
	c := mk.fresh(t)
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, errs[i] = put(ctx, c, "PutIfAbsent", "m/pi/race.jsonl/0000000002", fmt.Sprintf("writer %d", i))
		})
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("writers %d and %d both created the object", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, replica.ErrObjectExists):
			t.Errorf("writer %d: %v, want ErrObjectExists", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no writer created the object")
	}
	mustHold(t, c, "m/pi/race.jsonl/0000000002", fmt.Sprintf("writer %d", winner))
}

// confReplace is Conformance's case "replace".
func confReplace(t *testing.T, ctx context.Context, mk maker) {
	c := mk.fresh(t)
	a, err := put(ctx, c, "Put", "obj", "version a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := put(ctx, c, "Put", "obj", "version b")
	if err != nil {
		t.Fatal(err)
	}
	if a.ETag == b.ETag {
		t.Errorf("two contents, one ETag %q", a.ETag)
	}
	mustHold(t, c, "obj", "version b")
	again, err := put(ctx, c, "Put", "obj", "version b")
	if err != nil {
		t.Fatal(err)
	}
	if again.ETag != b.ETag {
		t.Errorf("the same bytes written again: ETag %q, was %q", again.ETag, b.ETag)
	}
}

// confCompareAndSwap is Conformance's case "compare and swap".
func confCompareAndSwap(t *testing.T, ctx context.Context, mk maker) {
	c := mk.fresh(t)
	v1, err := put(ctx, c, "PutIfAbsent", "lease", "held by a")
	if err != nil {
		t.Fatal(err)
	}
	v2, err := c.PutIfMatch(ctx, "lease", strings.NewReader("held by b"), 9, v1.ETag)
	if err != nil {
		t.Fatalf("PutIfMatch with the current ETag: %v", err)
	}
	if got := mustHold(t, c, "lease", "held by b"); got.ETag != v2.ETag || v2.ETag == v1.ETag {
		t.Errorf("ETags: was %q, PutIfMatch returned %q, Get says %q", v1.ETag, v2.ETag, got.ETag)
	}
	if _, err := c.PutIfMatch(ctx, "lease", strings.NewReader("held by c"), 9, v1.ETag); !errors.Is(err, replica.ErrObjectChanged) {
		t.Fatalf("PutIfMatch with a stale ETag: %v, want ErrObjectChanged", err)
	}
	mustHold(t, c, "lease", "held by b")
	if err := c.Delete(ctx, "lease"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutIfMatch(ctx, "lease", strings.NewReader("held by d"), 9, v2.ETag); !errors.Is(err, replica.ErrObjectNotFound) {
		t.Fatalf("PutIfMatch of a deleted object: %v, want ErrObjectNotFound", err)
	}
	mustBeMissing(t, c, "lease")
}

// confConcurrentSwapsOneWins is Conformance's case "concurrent swaps: one wins".
func confConcurrentSwapsOneWins(t *testing.T, ctx context.Context, mk maker) {
	c := mk.fresh(t)
	v, err := put(ctx, c, "Put", "m/pi/cas.jsonl/head", "generation 1")
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			body := fmt.Sprintf("generation 2 by %d", i)
			_, errs[i] = c.PutIfMatch(ctx, "m/pi/cas.jsonl/head", strings.NewReader(body), int64(len(body)), v.ETag)
		})
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("writers %d and %d both replaced version 1", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, replica.ErrObjectChanged):
			t.Errorf("writer %d: %v, want ErrObjectChanged", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no writer replaced the object")
	}
	mustHold(t, c, "m/pi/cas.jsonl/head", fmt.Sprintf("generation 2 by %d", winner))
}

// confList is Conformance's case "list".
func confList(t *testing.T, ctx context.Context, mk maker) {
	c := mk.fresh(t)
	all := []string{"x/a-b", "x/a/b", "x/a/c/d", "x/ab", "x/b", "x0", "y/z", "m/pi/2026-03-01T09-00-00-000Z_0e9e.jsonl/0000000001"}
	sizes := map[string]int64{}
	for i, k := range slices.Backward(all) { // not in key order
		body := strings.Repeat("x", i+1)
		sizes[k] = int64(len(body))
		if _, err := put(ctx, c, "PutIfAbsent", k, body); err != nil {
			t.Fatal(err)
		}
	}
	want := slices.Sorted(slices.Values(all))
	for _, x := range []struct {
		prefix string
		want   []string
	}{
		{"", want},
		{"x/", []string{"x/a-b", "x/a/b", "x/a/c/d", "x/ab", "x/b"}},
		{"x/a", []string{"x/a-b", "x/a/b", "x/a/c/d", "x/ab"}},
		{"x/a/", []string{"x/a/b", "x/a/c/d"}},
		{"x", []string{"x/a-b", "x/a/b", "x/a/c/d", "x/ab", "x/b", "x0"}},
		{"m/pi/", all[7:]},
		{"x/a/b", []string{"x/a/b"}},
		{"nothing/", nil},
		{"y/z/", nil},
	} {
		keys, infos := ListKeys(t, c, x.prefix)
		if diff := cmp.Diff(x.want, keys); diff != "" {
			t.Errorf("list %q (-want +got):\n%s", x.prefix, diff)
		}
		for _, o := range infos {
			if o.Size != sizes[o.Key] || o.ModTime.IsZero() {
				t.Errorf("list %q: %+v, want size %d and a time", x.prefix, o, sizes[o.Key])
			}
			if o.ETag != "" {
				if _, got, _ := Read(t, c, o.Key); got.ETag != o.ETag {
					t.Errorf("list %q: %s has ETag %q, Get says %q", x.prefix, o.Key, o.ETag, got.ETag)
				}
			}
		}
	}
	// Leaving the listing early is allowed.
	n := 0
	for _, err := range c.List(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 2 {
			break
		}
	}
}

// confDelete is Conformance's case "delete".
func confDelete(t *testing.T, ctx context.Context, mk maker) {
	c := mk.fresh(t)
	if _, err := put(ctx, c, "Put", "m/pi/gone.jsonl/0000000001", "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := put(ctx, c, "Put", "m/pi/kept.jsonl/0000000001", "y"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := c.Delete(ctx, "m/pi/gone.jsonl/0000000001"); err != nil {
			t.Fatalf("delete: %v", err)
		}
	}
	if err := c.Delete(ctx, "never/there"); err != nil {
		t.Errorf("delete of a key never written: %v", err)
	}
	mustBeMissing(t, c, "m/pi/gone.jsonl/0000000001")
	if keys, _ := ListKeys(t, c, ""); !slices.Equal(keys, []string{"m/pi/kept.jsonl/0000000001"}) {
		t.Errorf("after the delete the remote holds %v", keys)
	}
	// The key can be created again.
	if _, err := put(ctx, c, "PutIfAbsent", "m/pi/gone.jsonl/0000000001", "z"); err != nil {
		t.Fatal(err)
	}
	mustHold(t, c, "m/pi/gone.jsonl/0000000001", "z")
}

// confAShortReaderWritesNothing is Conformance's case "a short reader writes nothing".
func confAShortReaderWritesNothing(t *testing.T, ctx context.Context, mk maker) {
	c := mk.fresh(t)
	if _, err := put(ctx, c, "Put", "seg", "old"); err != nil {
		t.Fatal(err)
	}
	writes := map[string]func(key string, r io.Reader) error{
		"Put": func(key string, r io.Reader) error { _, err := c.Put(ctx, key, r, 10); return err },
		"PutIfAbsent": func(key string, r io.Reader) error {
			_, err := c.PutIfAbsent(ctx, key, r, 10)
			return err
		},
	}
	for how, write := range writes {
		for kind, r := range shortReaders() {
			if err := write("new-"+how, r); err == nil || !strings.Contains(err.Error(), "the reader ended before the object's size") {
				t.Errorf("%s of 5 bytes as 10 from %s: %v, want the reader ended before the object's size", how, kind, err)
			}
			mustBeMissing(t, c, "new-"+how)
		}
	}
	for kind, r := range shortReaders() {
		if err := writes["Put"]("seg", r); err == nil {
			t.Errorf("Put of 5 bytes as 10 from %s over an object succeeded", kind)
		}
		mustHold(t, c, "seg", "old")
	}
}

// confAReaderKeepsItsVersion is Conformance's case "a reader keeps its version".
func confAReaderKeepsItsVersion(t *testing.T, ctx context.Context, mk maker) {
	c := mk.fresh(t)
	old := strings.Repeat("old ", 1000)
	if _, err := put(ctx, c, "Put", "obj", old); err != nil {
		t.Fatal(err)
	}
	rc, info, err := c.Get(ctx, "obj")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if _, err := put(ctx, c, "Put", "obj", "new"); err != nil {
		// Replacing a file this process holds open needs POSIX
		// rename semantics, which Windows 10 has and wine lacks.
		testenv.SkipUnderWineIf(t, errors.Is(err, vfs.ErrInUse), testenv.WineRename)
		t.Fatal(err)
	}
	data, err := io.ReadAll(rc)
	if err != nil || string(data) != old || info.Size != int64(len(old)) {
		t.Errorf("the reader opened before the replacement read %d bytes (%v), want the old %d", len(data), err, len(old))
	}
	mustHold(t, c, "obj", "new")
}

// confAMissingBucket is Conformance's case "a missing bucket".
func confAMissingBucket(t *testing.T, ctx context.Context, mk maker) {
	c := mk.missing(t)
	if _, _, err := c.Get(ctx, "k"); !errors.Is(err, replica.ErrNoBucket) {
		t.Errorf("get: %v, want ErrNoBucket", err)
	}
	for _, how := range []string{"Put", "PutIfAbsent"} {
		if _, err := put(ctx, c, how, "k", "x"); !errors.Is(err, replica.ErrNoBucket) {
			t.Errorf("%s: %v, want ErrNoBucket", how, err)
		}
	}
	if _, err := c.PutIfMatch(ctx, "k", bytes.NewReader([]byte("x")), 1, "0123"); !errors.Is(err, replica.ErrNoBucket) {
		t.Errorf("PutIfMatch: %v, want ErrNoBucket", err)
	}
	if err := c.Delete(ctx, "k"); !errors.Is(err, replica.ErrNoBucket) {
		t.Errorf("delete: %v, want ErrNoBucket", err)
	}
	for _, err := range c.List(ctx, "") {
		if !errors.Is(err, replica.ErrNoBucket) {
			t.Errorf("list: %v, want ErrNoBucket", err)
		}
	}
	if _, _, err := c.Get(ctx, "k"); !errors.Is(err, replica.ErrNoBucket) {
		t.Errorf("get after the writes: %v, want ErrNoBucket (nothing may create the bucket)", err)
	}
}
