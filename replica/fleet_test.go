package replica_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/replica"
	"github.com/sessctl/sessctl/replica/s3"
)

// clientFor is the real Client of a test's remote.
func clientFor(t testing.TB, be *backend, remote string) replica.Client {
	t.Helper()
	if !be.s3() {
		c, err := replica.NewDirClient(remoteDir(remote), nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	bucket, prefix, err := s3.ParseURL(remote)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s3.NewClient(s3conf(be.srv), bucket, prefix)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// countingClient counts the requests of a Client by operation and by
// the first element of the key ("m", "d", "l", "t").
type countingClient struct {
	replica.Client
	mu sync.Mutex
	n  map[string]int // "put d", "get m", ...
}

func newCounting(c replica.Client) *countingClient {
	return &countingClient{Client: c, n: map[string]int{}}
}

func (c *countingClient) note(op, key string) {
	k, _, _ := strings.Cut(key, "/")
	c.mu.Lock()
	c.n[op+" "+k]++
	c.mu.Unlock()
}

func (c *countingClient) count(op, kind string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[op+" "+kind]
}

func (c *countingClient) Get(ctx context.Context, key string) (io.ReadCloser, replica.ObjectInfo, error) {
	c.note("get", key)
	return c.Client.Get(ctx, key)
}

func (c *countingClient) Put(ctx context.Context, key string, r io.Reader, size int64) (replica.ObjectInfo, error) {
	c.note("put", key)
	return c.Client.Put(ctx, key, r, size)
}

func (c *countingClient) PutIfAbsent(ctx context.Context, key string, r io.Reader, size int64) (replica.ObjectInfo, error) {
	c.note("put", key)
	return c.Client.PutIfAbsent(ctx, key, r, size)
}

func (c *countingClient) PutIfMatch(ctx context.Context, key string, r io.Reader, size int64, etag string) (replica.ObjectInfo, error) {
	c.note("put", key)
	return c.Client.PutIfMatch(ctx, key, r, size, etag)
}

func (c *countingClient) Delete(ctx context.Context, key string) error {
	c.note("delete", key)
	return c.Client.Delete(ctx, key)
}

// A push that published its manifest and died before it recorded so
// (its record names the generation before) leaves the next pushes
// compacting all the same: the remote segments the local file holds at
// the same place are its own. (They once stopped compacting for good:
// every later push added a segment.)
func TestCompactionAfterLostRecord(t *testing.T) { eachBackend(t, testCompactionAfterLostRecord) }

func testCompactionAfterLostRecord(t *testing.T, be *backend) {
	remote := remoteFor(t, be)
	a := newMachine(t, be, remote)
	compactOpts(&a.opts)
	path := a.newSession(t, "/c/lost", 2)
	a.run(t, "push")
	saved := filepath.Join(t.TempDir(), "state")
	if err := os.CopyFS(saved, os.DirFS(a.opts.StateDir)); err != nil {
		t.Fatal(err)
	}
	appendTo(t, path, "lost", 1)
	a.run(t, "push")
	// The record of that push is lost: the state is the one before.
	if err := os.RemoveAll(a.opts.StateDir); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(a.opts.StateDir, os.DirFS(saved)); err != nil {
		t.Fatal(err)
	}
	pushes := 60
	for i := range pushes {
		appendTo(t, path, "after"+strconv.Itoa(i), 1)
		a.run(t, "push")
	}
	m := manifestOf(t, be, remote, filepath.Base(path))
	// Sealed segments (half the 4 KiB limit or more) and at most three
	// of each of the four classes below.
	if limit := int(m.Size/2048) + 4*3; len(m.Segments) > limit {
		t.Errorf("%d segments for %d bytes after %d pushes; want at most %d", len(m.Segments), m.Size, pushes+2, limit)
	}
	checkBucket(t, be, remote)
	fresh := newMachine(t, be, remote)
	fresh.run(t, "pull")
	sameEntries(t, path, sessionFiles(t, fresh.agentDir)[filepath.Base(path)])
}

// manifestOf reads the newest manifest of a session from the remote.
func manifestOf(t testing.TB, be *backend, remote, name string) replica.Manifest {
	t.Helper()
	ks := be.keys(t, remote, "m/pi/"+name+"/")
	if len(ks) == 0 {
		t.Fatalf("no manifest of %s", name)
	}
	var m replica.Manifest
	if err := json.Unmarshal(be.get(t, remote, ks[len(ks)-1]), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// sameEntries fails unless the session files hold the same entry lines
// (but sync markers, which each machine keeps for itself).
func sameEntries(t testing.TB, a, b string) {
	t.Helper()
	want, wh := entries(t, a)
	got, gh := entries(t, b)
	for _, m := range []map[string]string{want, got} {
		for id, l := range m {
			if strings.Contains(l, `"label":"sessctl sync: remote tip"`) {
				delete(m, id)
			}
		}
	}
	if wh != gh {
		t.Errorf("%s: header differs", filepath.Base(b))
	}
	if len(got) != len(want) {
		t.Errorf("%s: %d entries, want %d", filepath.Base(b), len(got), len(want))
	}
	for id, l := range want {
		if got[id] != l {
			t.Errorf("%s: entry %s missing or altered", filepath.Base(b), id)
		}
	}
}

// A session pushed a few hundred times stays a few segments: compaction
// merges the small ones (bytes unchanged), a pull from scratch reads a
// handful of objects, and the objects merged away stay until a Prune
// past the grace period collects them, after which every manifest's
// objects are still there.
func TestCompactionKeepsPullsShort(t *testing.T) { eachBackend(t, testCompactionKeepsPullsShort) }

func testCompactionKeepsPullsShort(t *testing.T, be *backend) {
	remote := remoteFor(t, be)
	a := newMachine(t, be, remote)
	a.opts.SegmentSize, a.opts.InlineMax = 8192, 1024
	cc := newCounting(clientFor(t, be, remote))
	a.opts.Client = cc
	path := a.newSession(t, "/c/one", 1)
	a.run(t, "push")
	pushes := 150
	for i := range pushes {
		appendTo(t, path, "c"+strconv.Itoa(i), 1)
		a.run(t, "push")
	}
	m := manifestOf(t, be, remote, filepath.Base(path))
	inline, objs := 0, 0
	for _, s := range m.Segments {
		if s.Data != nil {
			inline++
		} else {
			objs++
		}
	}
	// 150 pushes of ~300 bytes with 1 KiB inline: ~45 data objects
	// without compaction.
	if objs > 16 {
		t.Errorf("%d data segments after %d pushes (%d bytes); want at most 16", objs, pushes, m.Size)
	}
	checkBucket(t, be, remote)
	if n := cc.count("get", "d"); n != 0 {
		t.Errorf("the pushes read %d data objects; compaction should take the bytes from the local file", n)
	}

	fresh := newMachine(t, be, remote)
	rep := fresh.run(t, "pull")
	sameEntries(t, path, sessionFiles(t, fresh.agentDir)[filepath.Base(path)])
	if g := rep.RequestKinds.Get; g > 20 {
		t.Errorf("a pull from scratch made %d GETs (%d segments); want at most 20", g, len(m.Segments))
	}
	t.Logf("%d pushes: %d segments (%d inline), a pull from scratch: %+v", pushes, len(m.Segments), inline, rep.RequestKinds)

	// Merged-away objects are kept until a Prune after the grace period.
	before := len(be.keys(t, remote, "d/"))
	if before <= objs {
		t.Fatalf("%d data objects for %d segments: nothing was left to collect", before, objs)
	}
	pr := a.remote(t)
	if rep, err := pr.Prune(context.Background(), replica.PruneOptions{}); err != nil || len(rep.Collected) != 0 {
		t.Fatalf("prune within the grace period: %v, collected %v", err, rep.Collected)
	}
	later := a.opts
	later.Now = func() time.Time { return time.Now().Add(3 * time.Hour) }
	lr, err := replica.Open(later)
	if err != nil {
		t.Fatal(err)
	}
	prep, err := lr.Prune(context.Background(), replica.PruneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after := len(be.keys(t, remote, "d/")); after != objs || len(prep.Collected) != before-objs {
		t.Errorf("prune: %d data objects left for %d segments, %d collected (of %d)", after, objs, len(prep.Collected), before-objs)
	}
	checkBucket(t, be, remote)
	again := newMachine(t, be, remote)
	again.run(t, "pull")
	sameEntries(t, path, sessionFiles(t, again.agentDir)[filepath.Base(path)])
}

// A remote written by v0.1.0 (a data object per push, manifests without
// the members added since) is read as it is: pulled intact, and the
// next push of a machine holding every line compacts it.
func TestOldLayoutReadable(t *testing.T) { eachBackend(t, testOldLayoutReadable) }

func testOldLayoutReadable(t *testing.T, be *backend) {
	remote := remoteFor(t, be)
	src := newMachine(t, be, remote)
	path := src.newSession(t, "/old/p", 12)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(path)
	// The v0.1.0 layout, by hand: a segment of two lines per push.
	lines := strings.SplitAfter(string(data), "\n")
	lines = lines[:len(lines)-1]
	type oldSeg struct {
		Object string `json:"object"`
		SHA256 string `json:"sha256"`
		Size   int64  `json:"size"`
		Plain  int64  `json:"plain"`
		Lines  int    `json:"lines"`
	}
	type oldManifest struct {
		Format   string   `json:"format"`
		Kind     string   `json:"kind"`
		Name     string   `json:"name"`
		Gen      int64    `json:"gen"`
		Host     string   `json:"host,omitempty"`
		Time     string   `json:"time,omitempty"`
		Size     int64    `json:"size"`
		Lines    int      `json:"lines,omitempty"`
		Segments []oldSeg `json:"segments,omitempty"`
	}
	m := oldManifest{Format: replica.FormatVersion, Kind: replica.KindPi, Name: name, Gen: 7, Host: "old", Time: "2026-11-01T00:00:00Z"}
	for i := 0; i < len(lines); i += 2 {
		seg := strings.Join(lines[i:min(i+2, len(lines))], "")
		h := sha256.Sum256([]byte(seg))
		sum := hex.EncodeToString(h[:])
		be.put(t, remote, "d/"+sum, []byte(seg))
		n := strings.Count(seg, "\n")
		m.Segments = append(m.Segments, oldSeg{Object: "d/" + sum, SHA256: sum, Size: int64(len(seg)), Plain: int64(len(seg)), Lines: n})
		m.Size += int64(len(seg))
		m.Lines += n
	}
	mb, _ := json.Marshal(m)
	be.put(t, remote, "sessctl-replica.json", []byte(`{"format":"sessctl-replica/1","encrypted":false}`))
	be.put(t, remote, fmt.Sprintf("m/pi/%s/%010d", name, m.Gen), mb)

	b := newMachine(t, be, remote)
	b.opts.SegmentSize = 4096
	b.run(t, "pull")
	bp := sessionFiles(t, b.agentDir)[name]
	sameEntries(t, path, bp)
	appendTo(t, bp, "new", 1)
	b.run(t, "push")
	nm := manifestOf(t, be, remote, name)
	if len(nm.Segments) >= len(m.Segments) {
		t.Errorf("the push after an old layout left %d segments (of %d): not compacted", len(nm.Segments), len(m.Segments))
	}
	c := newMachine(t, be, remote)
	c.run(t, "pull")
	sameEntries(t, bp, sessionFiles(t, c.agentDir)[name])
	checkBucket(t, be, remote)
}

// What a manifest states bounds every read: a data object longer than
// its manifest says is refused before its bytes are read.
func TestStatedSizeBoundsReads(t *testing.T) {
	be := &backend{}
	remote := remoteFor(t, be)
	a := newMachine(t, be, remote)
	a.opts.InlineMax = -1
	path := a.newSession(t, "/b/p", 2)
	a.run(t, "push")
	m := manifestOf(t, be, remote, filepath.Base(path))
	big := make([]byte, 8<<20)
	be.put(t, remote, m.Segments[0].Object, big) // longer than stated
	fresh := newMachine(t, be, remote)
	rep, err := fresh.remote(t).Pull(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Sessions) != 1 || !errors.Is(rep.Sessions[0].Err, replica.ErrCorruptRemote) {
		t.Fatalf("pull of an object longer than its manifest says: %+v", rep.Sessions)
	}
	if rep.Downloaded > 64<<10 {
		t.Errorf("read %d bytes of an object its manifest says holds %d", rep.Downloaded, m.Segments[0].Size)
	}
}

// A push downloads no data object whose lines it can know otherwise: a
// machine that lost its sync state compares its file with the remote
// copy by checksums, and a push after a pull knows the merged lines'
// ids from the pull.
func TestPushDownloadsNothingItHas(t *testing.T) { eachBackend(t, testPushDownloadsNothingItHas) }

func testPushDownloadsNothingItHas(t *testing.T, be *backend) {
	remote := remoteFor(t, be)
	a, b := newMachine(t, be, remote), newMachine(t, be, remote)
	a.opts.InlineMax, b.opts.InlineMax = -1, -1
	// Segments of 64 KiB: the first push's are sealed, and the three
	// small pushes after them are not compacted (compaction's reads are
	// not the comparison's).
	a.opts.SegmentSize, b.opts.SegmentSize = 64<<10, 64<<10
	path := a.newSession(t, "/d/p", 700)
	a.run(t, "push")
	b.run(t, "pull")
	bp := sessionFiles(t, b.agentDir)[filepath.Base(path)]

	// A lost cache: compared by checksums.
	if err := os.RemoveAll(b.opts.StateDir); err != nil {
		t.Fatal(err)
	}
	appendTo(t, bp, "b1", 1)
	cc := newCounting(clientFor(t, be, remote))
	b.opts.Client = cc
	if rep := b.run(t, "push"); cc.count("get", "d") != 0 || rep.Sessions[0].Pushed != 2 {
		t.Errorf("push after the state was lost: %d data objects read, %d lines pushed; want 0 and 2", cc.count("get", "d"), rep.Sessions[0].Pushed)
	}
	// A pull merges the other machine's lines after this one's own
	// unpushed ones; the push that follows does not read them again.
	a.run(t, "pull")
	appendTo(t, path, "a1", 1)
	a.run(t, "push")
	appendTo(t, bp, "b2", 1)
	if rep := b.run(t, "pull"); rep.Sessions[0].Pulled != 2 {
		t.Fatalf("pull: %+v", rep.Sessions[0])
	}
	got0 := cc.count("get", "d")
	if rep := b.run(t, "push"); cc.count("get", "d") != got0 || rep.Sessions[0].Pushed != 2 {
		t.Errorf("push after a pull: %d data objects read, %d lines pushed; want 0 and 2", cc.count("get", "d")-got0, rep.Sessions[0].Pushed)
	}
	a.run(t, "pull")
	sameEntries(t, path, bp)
}

// A session deleted from the remote stays deleted: each machine's pull
// moves its copy to the trash (or keeps one holding unpushed lines,
// saying so), no push brings it back, a fresh machine never sees it, and
// manifests an older sessctl writes for it later do not count.
func TestDeletePropagates(t *testing.T) { eachBackend(t, testDeletePropagates) }

func testDeletePropagates(t *testing.T, be *backend) {
	remote := remoteFor(t, be)
	ctx := context.Background()
	a, b := newMachine(t, be, remote), newMachine(t, be, remote)
	p1 := a.newSession(t, "/del/one", 2)
	p2 := a.newSession(t, "/del/two", 2)
	a.run(t, "push")
	b.run(t, "pull")
	n1, n2 := filepath.Base(p1), filepath.Base(p2)
	id1 := strings.TrimSuffix(n1[strings.IndexByte(n1, '_')+1:], ".jsonl")
	appendTo(t, sessionFiles(t, b.agentDir)[n2], "unpushed", 1) // b's copy of two gains lines

	oldKeys := be.keys(t, remote, "m/pi/"+n1+"/")
	oldBody := be.get(t, remote, oldKeys[len(oldKeys)-1])

	rep, err := a.remote(t).Delete(ctx, []string{id1[:13], n2})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Sessions) != 2 || rep.Sessions[0].State != "deleted" {
		t.Fatalf("delete: %+v", rep.Sessions)
	}
	if len(be.keys(t, remote, "m/pi/"+n1+"/")) != 0 || len(be.keys(t, remote, "t/pi/"+n1)) != 1 {
		t.Fatalf("after delete: manifests %v, tombstone %v", be.keys(t, remote, "m/"), be.keys(t, remote, "t/"))
	}
	if _, ok := sessionFiles(t, a.agentDir)[n1]; ok {
		t.Error("the deleting machine's copy was not moved to the trash")
	}
	rep = b.run(t, "pull")
	bf := sessionFiles(t, b.agentDir)
	if _, ok := bf[n1]; ok {
		t.Error("b's pull did not move its copy of the deleted session to the trash")
	}
	if trashed, _ := filepath.Glob(filepath.Join(b.agentDir, "sessions", ".trash", "*", "*", n1)); len(trashed) != 1 {
		t.Errorf("b's copy is not in the trash: %v", trashed)
	}
	if _, ok := bf[n2]; !ok {
		t.Error("b's copy holding unpushed lines was removed")
	} else if len(rep.Warnings) == 0 {
		t.Error("keeping a deleted session's copy with unpushed lines was not reported")
	}
	b.run(t, "push")
	if ks := be.keys(t, remote, "m/"); len(ks) != 0 {
		t.Errorf("a push brought deleted sessions back: %v", ks)
	}
	if st := b.run(t, "status"); len(st.Sessions) != 1 || st.Sessions[0].State != "deleted" {
		t.Errorf("status of a deleted session kept locally: %+v", st.Sessions)
	}
	// An older sessctl, which knows no tombstones, publishes the session
	// again: still deleted for this one.
	be.put(t, remote, oldKeys[len(oldKeys)-1], oldBody)
	fresh := newMachine(t, be, remote)
	fresh.run(t, "pull")
	if got := sessionFiles(t, fresh.agentDir); len(got) != 0 {
		t.Errorf("a fresh machine pulled deleted sessions: %v", keys(got))
	}
	// A name no remote session has deletes nothing.
	if _, err := a.remote(t).Delete(ctx, []string{"no-such-session"}); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("delete of an unknown session: %v, want ErrNotFound", err)
	}
}

// Retention: Prune with OlderThan deletes the sessions not written for
// that long (tombstones, reason prune) and collects their objects; the
// local copies stay, and are not pushed again.
func TestPruneOlderThan(t *testing.T) { eachBackend(t, testPruneOlderThan) }

func testPruneOlderThan(t *testing.T, be *backend) {
	remote := remoteFor(t, be)
	a := newMachine(t, be, remote)
	a.opts.InlineMax = -1 // data objects, to be collected
	p1 := a.newSession(t, "/ret/one", 2)
	a.run(t, "push")
	later := a.opts
	later.Now = func() time.Time { return time.Now().Add(100 * 24 * time.Hour) }
	lr, err := replica.Open(later)
	if err != nil {
		t.Fatal(err)
	}
	dry, err := lr.Prune(context.Background(), replica.PruneOptions{OlderThan: 90 * 24 * time.Hour, DryRun: true})
	if err != nil || len(dry.Sessions) != 1 || len(be.keys(t, remote, "t/")) != 0 {
		t.Fatalf("dry run: %v %+v; tombstones %v", err, dry, be.keys(t, remote, "t/"))
	}
	// A session written since is younger than the retention.
	p2 := a.newSession(t, "/ret/two", 2)
	rep, err := lr.Prune(context.Background(), replica.PruneOptions{OlderThan: 90 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Sessions) != 1 || rep.Sessions[0].Name != filepath.Base(p1) || len(rep.Collected) == 0 {
		t.Fatalf("prune: %+v", rep)
	}
	if ks := be.keys(t, remote, "d/"); len(ks) != 0 {
		t.Errorf("objects of the pruned session left: %v", ks)
	}
	a.run(t, "sync")
	if _, ok := sessionFiles(t, a.agentDir)[filepath.Base(p1)]; !ok {
		t.Error("a pull removed the local copy of a pruned session")
	}
	if ks := be.keys(t, remote, "m/pi/"+filepath.Base(p1)); len(ks) != 0 {
		t.Errorf("a push brought a pruned session back: %v", ks)
	}
	if ks := be.keys(t, remote, "m/pi/"+filepath.Base(p2)); len(ks) == 0 {
		t.Error("the young session was not pushed")
	}
}

// An object no manifest names (an interrupted push's) is collected only
// once it is older than the grace period.
func TestPruneGrace(t *testing.T) {
	be := &backend{}
	remote := remoteFor(t, be)
	a := newMachine(t, be, remote)
	a.newSession(t, "/g/p", 2)
	a.run(t, "push")
	orphan := []byte("{\"an interrupted push's segment\":1}\n")
	h := sha256.Sum256(orphan)
	key := "d/" + hex.EncodeToString(h[:])
	be.put(t, remote, key, orphan)
	if rep, err := a.remote(t).Prune(context.Background(), replica.PruneOptions{}); err != nil || len(rep.Collected) != 0 {
		t.Fatalf("prune of a young orphan: %v %v", err, rep.Collected)
	}
	later := a.opts
	later.Now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	lr, _ := replica.Open(later)
	rep, err := lr.Prune(context.Background(), replica.PruneOptions{})
	if err != nil || len(rep.Collected) != 1 || rep.Collected[0] != key {
		t.Fatalf("prune of an old orphan: %v %v", err, rep.Collected)
	}
	checkBucket(t, be, remote)
}

// The request budget: while a session is written, the replicator ships
// it at most once per Interval, small batches in the manifest alone (one
// PUT); a session's Close ships what is left at once.
func TestReplicatorRequestBudget(t *testing.T) {
	be := &backend{}
	remote := remoteFor(t, be)
	a, b := newMachine(t, be, remote), newMachine(t, be, remote)
	cc := newCounting(clientFor(t, be, remote))
	a.opts.Client = cc
	x := replica.NewReplicator(a.remote(t), replica.ReplicatorOptions{Delay: time.Millisecond, Interval: time.Hour})
	s, err := openStore(t, engine.StoreOptions{AgentDir: a.agentDir, Replicator: x}).Create(context.Background(), "/budget/p", engine.CreateOptions{WriteAtOnce: true})
	if err != nil {
		t.Fatal(err)
	}
	// Appends spread over many Delays: without a budget each would be
	// a shipment.
	for i := range 20 {
		appendPairs(t, s, "b"+strconv.Itoa(i), 1)
		time.Sleep(5 * time.Millisecond)
	}
	during := cc.count("put", "m")
	path := s.SessionFile()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if during > 1 {
		t.Errorf("%d manifests published while appending within one Interval; want at most 1", during)
	}
	if total := cc.count("put", "m"); total > 2 || cc.count("put", "d") != 0 {
		t.Errorf("%d manifest and %d data PUTs for 20 small bursts and a Close; want at most 2 and 0", total, cc.count("put", "d"))
	}
	b.run(t, "pull")
	sameEntries(t, path, sessionFiles(t, b.agentDir)[filepath.Base(path)])
	st, err := a.remote(t).Replicators()
	if err != nil || len(st) != 1 || st[0].Requests.Put == 0 || !st[0].Closed || st[0].Sessions != 1 {
		t.Errorf("the replicator's statistics: %v %+v", err, st)
	}
}

// One writer across machines: a second machine opening a session for
// writing is refused, naming the lease's holder; with Wait it gets the
// lease when the first closes. A holder that cannot reach the remote
// stops writing once its lease could no longer be renewed, and the
// other takes the lease over when it expires.
func TestLeaseOneWriter(t *testing.T) {
	be := &backend{}
	remote := remoteFor(t, be)
	ctx := context.Background()
	a, b := newMachine(t, be, remote), newMachine(t, be, remote)
	fa, fb := newFaultClient(t, remote), newFaultClient(t, remote)
	a.opts.Client, b.opts.Client = fa, fb
	ro := replica.ReplicatorOptions{Delay: time.Millisecond, Interval: -1, Lease: true, LeaseTTL: 600 * time.Millisecond, Command: "agent", CloseTimeout: time.Second}
	xa, xb := replica.NewReplicator(a.remote(t), ro), replica.NewReplicator(b.remote(t), ro)
	defer xa.Close()
	defer xb.Close()
	sta := openStore(t, engine.StoreOptions{AgentDir: a.agentDir, Replicator: xa, Sync: engine.SyncNone})
	stb := openStore(t, engine.StoreOptions{AgentDir: b.agentDir, Replicator: xb, Sync: engine.SyncNone})
	s, err := sta.Create(ctx, "/lease/p", engine.CreateOptions{WriteAtOnce: true})
	if err != nil {
		t.Fatal(err)
	}
	appendPairs(t, s, "a", 2)
	if err := xa.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	b.run(t, "pull")
	bp := sessionFiles(t, b.agentDir)[filepath.Base(s.SessionFile())]

	_, err = stb.Open(ctx, bp, engine.OpenOptions{})
	var le *engine.LockedError
	if !errors.Is(err, engine.ErrLocked) || !errors.As(err, &le) || le.Owner == nil || le.Owner.Host != a.opts.Host || le.Owner.PID != os.Getpid() || le.Owner.Command != "agent" {
		t.Fatalf("second machine's open: %v; want ErrLocked naming %s", err, a.opts.Host)
	}
	// With Wait: the lease is free as soon as the first closes.
	got := make(chan error, 1)
	var sb *engine.Session
	go func() {
		var err error
		sb, err = stb.Open(ctx, bp, engine.OpenOptions{Wait: true})
		got <- err
	}()
	time.Sleep(50 * time.Millisecond)
	appendPairs(t, s, "a-more", 1)
	if err := s.Close(); err != nil {
		// The lease is replaced while the other host's Wait reads it:
		// wine cannot replace a file another handle holds open.
		testenv.SkipUnderWineIf(t, errors.Is(err, vfs.ErrInUse), testenv.WineRename)
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("open with Wait after the holder closed: %v", err)
	}
	// b holds it now; a is refused.
	if _, err := sta.Open(ctx, s.SessionFile(), engine.OpenOptions{}); !errors.Is(err, engine.ErrLocked) {
		t.Fatalf("first machine's open while the second holds the lease: %v", err)
	}
	// b loses the remote (a partition) while a waits for the lease: b's
	// writes stop before a takes the lease over. Every append of b that
	// succeeded began before a had the lease.
	fb.down.Store(true)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	type taken struct {
		s   *engine.Session
		at  time.Time
		err error
	}
	took := make(chan taken, 1)
	go func() {
		s, err := sta.Open(wctx, s.SessionFile(), engine.OpenOptions{Wait: true})
		took <- taken{s, time.Now(), err}
	}()
	var lastOK time.Time
	deadline := time.Now().Add(10 * time.Second)
	for {
		began := time.Now()
		_, err := sb.AppendMessage(rawMessage(`{"role":"user","content":"partitioned","timestamp":1}`))
		if errors.Is(err, replica.ErrLeaseLost) {
			break
		}
		if err == nil {
			lastOK = began
		}
		if time.Now().After(deadline) {
			t.Fatalf("a holder cut off from the remote kept writing: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	tk := <-took
	if tk.err != nil {
		t.Fatalf("taking over an expired lease: %v", tk.err)
	}
	sa := tk.s
	if !lastOK.IsZero() && !lastOK.Before(tk.at) {
		t.Errorf("the cut-off holder's last write began at %v, the takeover ended at %v: they overlap", lastOK, tk.at)
	}
	fb.heal()
	if _, err := sb.AppendMessage(rawMessage(`{"role":"user","content":"too late","timestamp":1}`)); !errors.Is(err, replica.ErrLeaseLost) {
		t.Errorf("the old holder wrote after its lease was taken over: %v", err)
	}
	sb.Close()
	sa.Close()
}
