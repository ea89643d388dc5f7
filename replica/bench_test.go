package replica_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/message"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/internal/workload"
	"github.com/sessctl/sessctl/replica"
)

// The sync benchmarks run against MinIO on loopback, on the workloads
// make bench generates in $SESSCTL_BENCH_DIR (sessions/: 5,000 sessions of
// about 50 KB; big.jsonl: 100,000 entries), or smaller ones generated here
// when it is unset.

func benchDir(b *testing.B) string {
	b.Helper()
	if d := os.Getenv("SESSCTL_BENCH_DIR"); d != "" {
		return d
	}
	d := filepath.Join(os.TempDir(), "sessctl-sync-bench")
	if _, err := os.Stat(filepath.Join(d, "sessions")); err != nil {
		if _, err := workload.Dir(filepath.Join(d, "sessions"), 200, 50000, 1); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(d, "big.jsonl")); err != nil {
		if _, err := workload.WriteFile(filepath.Join(d, "big.jsonl"), workload.Options{Entries: 5000, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
	return d
}

// storeOf links the workload's sessions into an agent directory (one
// cwd folder), as a store to push; it returns the agent dir and the bytes.
func storeOf(b *testing.B, src string) (string, int64) {
	b.Helper()
	agent := filepath.Join(benchTemp(b), "agent")
	dst := filepath.Join(agent, "sessions", "--bench--")
	if err := os.MkdirAll(dst, 0o700); err != nil {
		b.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		b.Fatal(err)
	}
	var total int64
	for _, e := range ents {
		p := filepath.Join(src, e.Name())
		if err := os.Link(p, filepath.Join(dst, e.Name())); err != nil {
			b.Fatal(err)
		}
		fi, _ := e.Info()
		total += fi.Size()
	}
	return agent, total
}

func benchMachine(b *testing.B, srv *testenv.MinIOServer, agent string) *machine {
	b.Helper()
	m := &machine{agentDir: agent}
	m.opts = replica.Options{Remote: remoteFor(b, s3be(srv)), S3: s3conf(srv), AgentDir: agent, StateDir: filepath.Join(benchTemp(b), "state")}
	return m
}

// benchRoot holds what the benchmarks share across benchmarks; TestMain
// removes it.
var benchRoot string

// benchTemp returns a new directory below benchRoot.
func benchTemp(b *testing.B) string {
	b.Helper()
	if benchRoot == "" {
		d, err := os.MkdirTemp("", "sessctl-sync-bench-run-")
		if err != nil {
			b.Fatal(err)
		}
		benchRoot = d
	}
	d, err := os.MkdirTemp(benchRoot, "b")
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// pushed is the store the initial push benchmark pushed, which the
// no-change benchmarks reuse (an initial push of 5,000 sessions takes
// minutes on a loaded machine).
var pushed *machine

// BenchmarkSyncInitialPush pushes the whole store to an empty remote.
func BenchmarkSyncInitialPush(b *testing.B) {
	srv := testenv.MinIO(b)
	src := filepath.Join(benchDir(b), "sessions")
	var total int64
	var reqs int64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		var agent string
		agent, total = storeOf(b, src)
		m := benchMachine(b, srv, agent)
		b.StartTimer()
		rep := m.run(b, "push")
		reqs += rep.Requests
		pushed = m
	}
	b.SetBytes(total)
	b.ReportMetric(float64(reqs)/float64(b.N), "requests/op")
}

// BenchmarkSyncStatus and BenchmarkSyncPushNoChange compare an unchanged
// store with its remote.
func BenchmarkSyncStatus(b *testing.B)       { benchNoChange(b, "status") }
func BenchmarkSyncPushNoChange(b *testing.B) { benchNoChange(b, "push") }

func benchNoChange(b *testing.B, op string) {
	m := pushed
	if m == nil {
		srv := testenv.MinIO(b)
		agent, _ := storeOf(b, filepath.Join(benchDir(b), "sessions"))
		m = benchMachine(b, srv, agent)
		m.run(b, "push")
	}
	var reqs, moved int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep := m.run(b, op)
		reqs += rep.Requests
		moved += rep.Uploaded + rep.Downloaded
	}
	b.ReportMetric(float64(reqs)/float64(b.N), "requests/op")
	b.ReportMetric(float64(moved)/float64(b.N), "bytes-moved/op")
}

// BenchmarkSyncPushAfterAppend pushes a big session after 10 appends.
func BenchmarkSyncPushAfterAppend(b *testing.B) {
	srv := testenv.MinIO(b)
	agent := filepath.Join(b.TempDir(), "agent")
	dir := filepath.Join(agent, "sessions", "--bench--")
	os.MkdirAll(dir, 0o700)
	src, err := os.Open(filepath.Join(benchDir(b), "big.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, "2026-01-01T00-00-00-000Z_00000000-0000-4000-8000-000000000001.jsonl")
	dst, _ := os.Create(path)
	size, _ := io.Copy(dst, src)
	src.Close()
	dst.Close()
	m := benchMachine(b, srv, agent)
	m.run(b, "push")
	s, err := engine.OpenFile(context.Background(), path, engine.OpenOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var up int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		appendPairs(b, s, "bench", 5) // 10 entries
		b.StartTimer()
		rep := m.run(b, "push")
		up += rep.Uploaded
	}
	b.ReportMetric(float64(size)/1e6, "session-MB")
	b.ReportMetric(float64(up)/float64(b.N), "uploaded-bytes/op")
}

// BenchmarkSyncReplicatorLag appends 100 entries a second (fsynced) to a
// session with a Replicator for a few seconds and reports the lag from an
// append to its line being on the remote: for each segment shipped, the
// time since the oldest append it carries (the batch's worst).
func BenchmarkSyncReplicatorLag(b *testing.B) {
	srv := testenv.MinIO(b)
	agent := filepath.Join(b.TempDir(), "agent")
	m := benchMachine(b, srv, agent)
	var mu sync.Mutex
	var lags []time.Duration
	for i := 0; i < b.N; i++ {
		x := replica.NewReplicator(m.remote(b), replica.ReplicatorOptions{})
		x.OnShipped(func(_ string, lag time.Duration) { mu.Lock(); lags = append(lags, lag); mu.Unlock() })
		s, err := openStore(b, engine.StoreOptions{AgentDir: agent, Replicator: x}).Create(context.Background(), "/bench/lag", engine.CreateOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Flush(); err != nil { // the file exists from the start
			b.Fatal(err)
		}
		tick := time.NewTicker(10 * time.Millisecond) // 100 appends/s
		for n := 0; n < 500; n++ {
			<-tick.C
			msg := message.NewUser("lag "+strconv.Itoa(n), time.UnixMilli(1772355600000))
			if _, err := s.AppendMessage(msg); err != nil {
				b.Fatal(err)
			}
		}
		tick.Stop()
		s.Close()
		x.Close()
	}
	sort.Slice(lags, func(i, j int) bool { return lags[i] < lags[j] })
	if len(lags) == 0 {
		b.Fatal("nothing shipped")
	}
	p := func(q float64) float64 { return float64(lags[int(q*float64(len(lags)-1))]) / 1e6 }
	b.ReportMetric(p(0.5), "p50-ms")
	b.ReportMetric(p(0.99), "p99-ms")
	b.ReportMetric(float64(len(lags))/float64(b.N), "segments/op")
}
