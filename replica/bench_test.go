package replica_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/internal/workload"
	"github.com/sessctl/sessctl/message"
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
		if err := os.Link(p, filepath.Join(dst, piNameOf(p, e.Name()))); err != nil {
			b.Fatal(err)
		}
		fi, _ := e.Info()
		total += fi.Size()
	}
	return agent, total
}

// piNameOf is the name pi would file the session at path under: its
// header's id after a timestamp (a push refuses a file whose name says
// another session); else name.
func piNameOf(path, name string) string {
	f, err := os.Open(path)
	if err != nil {
		return name
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, _ := io.ReadFull(f, head)
	line, _, _ := strings.Cut(string(head[:n]), "\n")
	var h struct{ ID string }
	if json.Unmarshal([]byte(line), &h) != nil || h.ID == "" {
		return name
	}
	return "2026-01-01T00-00-00-000Z_" + h.ID + ".jsonl"
}

func benchMachine(b *testing.B, srv *testenv.MinIOServer, agent string) *machine {
	b.Helper()
	m := &machine{agentDir: agent}
	m.opts = replica.Options{Remote: remoteFor(b, s3be(srv)), Backends: s3Backends(s3conf(srv)), AgentDir: agent, StateDir: filepath.Join(benchTemp(b), "state")}
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
	path := filepath.Join(dir, piNameOf(filepath.Join(benchDir(b), "big.jsonl"), "2026-01-01T00-00-00-000Z_00000000-0000-4000-8000-000000000001.jsonl"))
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

// envInt reads a benchmark size from the environment.
func envInt(b *testing.B, name string, def int) int {
	if s := os.Getenv(name); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			b.Fatalf("%s=%q", name, s)
		}
		return n
	}
	return def
}

// loadavg is the 1-minute load average (Linux), or -1.
func loadavg() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f, _ := strconv.ParseFloat(strings.Fields(string(data))[0], 64)
	return f
}

// BenchmarkSyncFleet: SESSCTL_FLEET_SESSIONS (1,000) sessions open at once,
// each appending SESSCTL_FLEET_RATE (2) entries a second (user and
// assistant messages of about 400 bytes, at random phases, SyncNone)
// through one Replicator with its defaults (Interval 930 ms) to MinIO on
// loopback, for SESSCTL_FLEET_SECONDS (60) after a 10-second warm-up.
// It reports the lag of the shipments (for each, the time since the
// oldest append it carries), the PUTs per second per session (of
// manifests, data objects and all), the appends made, and, after every
// session was closed, how many acknowledged entries a pull from scratch
// on another machine lacks (lost). SESSCTL_FLEET_INTERVAL (ms) sets the
// replicator's Interval.
func BenchmarkSyncFleet(b *testing.B) {
	n := envInt(b, "SESSCTL_FLEET_SESSIONS", 1000)
	secs := envInt(b, "SESSCTL_FLEET_SECONDS", 60)
	rate := envInt(b, "SESSCTL_FLEET_RATE", 2)
	ro := replica.ReplicatorOptions{}
	if ms := os.Getenv("SESSCTL_FLEET_INTERVAL"); ms != "" {
		ro.Interval = time.Duration(envInt(b, "SESSCTL_FLEET_INTERVAL", 1000)) * time.Millisecond
	}
	srv := testenv.MinIO(b)
	for i := 0; i < b.N; i++ {
		agent := filepath.Join(benchTemp(b), "agent")
		m := benchMachine(b, srv, agent)
		cc := newCounting(clientFor(b, s3be(srv), m.opts.Remote))
		m.opts.Client = cc
		x := replica.NewReplicator(m.remote(b), ro)
		var mu sync.Mutex
		var lags []time.Duration
		measuring := false
		x.OnShipped(func(_ string, lag time.Duration) {
			mu.Lock()
			if measuring {
				lags = append(lags, lag)
			}
			mu.Unlock()
		})
		st := openStore(b, engine.StoreOptions{AgentDir: agent, Replicator: x, Sync: engine.SyncNone})
		ctx := context.Background()
		sessions := make([]*engine.Session, n)
		for k := range sessions {
			s, err := st.Create(ctx, "/fleet/"+strconv.Itoa(k%50), engine.CreateOptions{WriteAtOnce: true})
			if err != nil {
				b.Fatal(err)
			}
			sessions[k] = s
		}
		load0 := loadavg()
		var appends atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		text := strings.Repeat("the fleet's agents append their turns; ", 10)
		for k, s := range sessions {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(k), 7))
				every := time.Second / time.Duration(rate)
				t := time.NewTimer(time.Duration(rng.Int64N(int64(every))))
				defer t.Stop()
				for j := 0; ; j++ {
					select {
					case <-stop:
						return
					case <-t.C:
					}
					var msg message.Message = message.NewUser(text+strconv.Itoa(j), time.UnixMilli(1772355600000))
					if j%2 == 1 {
						msg = message.NewAssistant("anthropic-messages", "anthropic", "claude-sonnet-4-5", []message.Block{message.NewText(text)},
							message.Usage{}, message.StopStop, time.UnixMilli(1772355600000))
					}
					if _, err := s.AppendMessage(msg); err != nil {
						b.Error(err)
						return
					}
					appends.Add(1)
					// About rate a second, at no fixed phase.
					t.Reset(every/2 + time.Duration(rng.Int64N(int64(every))))
				}
			}()
		}
		time.Sleep(10 * time.Second)
		mu.Lock()
		measuring = true
		mu.Unlock()
		puts0, dputs0, mputs0, app0 := cc.count("put", "m")+cc.count("put", "d")+cc.count("put", "l"), cc.count("put", "d"), cc.count("put", "m"), appends.Load()
		dels0, gets0 := cc.count("delete", "m")+cc.count("delete", "d"), cc.count("get", "m")+cc.count("get", "d")+cc.count("get", "t")
		t0 := time.Now()
		b.ResetTimer()
		time.Sleep(time.Duration(secs) * time.Second)
		b.StopTimer()
		el := time.Since(t0).Seconds()
		puts, dputs, mputs, app := cc.count("put", "m")+cc.count("put", "d")+cc.count("put", "l")-puts0, cc.count("put", "d")-dputs0, cc.count("put", "m")-mputs0, appends.Load()-app0
		dels, gets := cc.count("delete", "m")+cc.count("delete", "d")-dels0, cc.count("get", "m")+cc.count("get", "d")+cc.count("get", "t")-gets0
		mu.Lock()
		measuring = false
		got := append([]time.Duration(nil), lags...)
		mu.Unlock()
		load1 := loadavg()
		close(stop)
		wg.Wait()
		for _, s := range sessions {
			if err := s.Close(); err != nil {
				b.Error(err)
			}
		}
		if err := x.Close(); err != nil {
			b.Error(err)
		}
		// Nothing lost: another machine pulls every session.
		other := benchMachine(b, srv, filepath.Join(benchTemp(b), "other"))
		other.opts.Remote = m.opts.Remote
		other.run(b, "pull")
		theirs := sessionFiles(b, other.agentDir)
		lost, total := 0, 0
		for name, p := range sessionFiles(b, agent) {
			mine, _ := entries(b, p)
			total += len(mine)
			var got map[string]string
			if q, ok := theirs[name]; ok {
				got, _ = entries(b, q)
			}
			for id, l := range mine {
				if got[id] != l {
					lost++
				}
			}
		}
		sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
		if len(got) == 0 {
			b.Fatal("nothing shipped while measuring")
		}
		p := func(q float64) float64 { return float64(got[int(q*float64(len(got)-1))]) / 1e6 }
		b.ReportMetric(float64(n), "sessions")
		b.ReportMetric(float64(app)/el, "appends/s")
		b.ReportMetric(p(0.5), "p50-ms")
		b.ReportMetric(p(0.99), "p99-ms")
		b.ReportMetric(float64(got[len(got)-1])/1e6, "max-ms")
		b.ReportMetric(float64(puts)/el/float64(n), "puts/s/session")
		b.ReportMetric(float64(mputs)/el/float64(n), "manifest-puts/s/session")
		b.ReportMetric(float64(dputs)/el/float64(n), "data-puts/s/session")
		b.ReportMetric(float64(dels)/el/float64(n), "deletes/s/session")
		b.ReportMetric(float64(gets)/el/float64(n), "gets/s/session")
		b.ReportMetric(float64(puts+dels+gets)/el, "requests/s")
		b.ReportMetric(float64(lost), "lost")
		b.ReportMetric(float64(total), "entries")
		b.ReportMetric(load0, "load-before")
		b.ReportMetric(load1, "load-after")
	}
}

// BenchmarkSyncPullAfterPushes pushes one session SESSCTL_PUSHES (10,000)
// times, two entries (about 600 bytes) before each push, then pulls it
// from scratch on another machine and reports that pull's requests by
// kind and the session's segments.
func BenchmarkSyncPullAfterPushes(b *testing.B) {
	pushes := envInt(b, "SESSCTL_PUSHES", 10000)
	srv := testenv.MinIO(b)
	for i := 0; i < b.N; i++ {
		agent := filepath.Join(benchTemp(b), "agent")
		m := benchMachine(b, srv, agent)
		path := m.newSession(b, "/bench/pushes", 1)
		r := m.remote(b)
		s, err := openStore(b, engine.StoreOptions{AgentDir: agent, Sync: engine.SyncNone}).Open(context.Background(), path, engine.OpenOptions{})
		if err != nil {
			b.Fatal(err)
		}
		var reqs int64
		start := time.Now()
		for k := range pushes {
			appendPairs(b, s, "push"+strconv.Itoa(k), 1)
			rep, err := r.Push(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			reqs += rep.Requests
		}
		pushTime := time.Since(start)
		s.Close()
		other := benchMachine(b, srv, filepath.Join(benchTemp(b), "other"))
		other.opts.Remote = m.opts.Remote
		b.ResetTimer()
		rep := other.run(b, "pull")
		b.StopTimer()
		mf := manifestOf(b, s3be(srv), m.opts.Remote, filepath.Base(path))
		inline := 0
		for _, sg := range mf.Segments {
			if sg.Data != nil {
				inline++
			}
		}
		b.ReportMetric(float64(pushes), "pushes")
		b.ReportMetric(float64(reqs)/float64(pushes), "requests/push")
		b.ReportMetric(pushTime.Seconds()/float64(pushes)*1e3, "ms/push")
		b.ReportMetric(float64(rep.RequestKinds.Get), "pull-gets")
		b.ReportMetric(float64(rep.RequestKinds.List), "pull-lists")
		b.ReportMetric(float64(rep.Requests), "pull-requests")
		b.ReportMetric(float64(len(mf.Segments)), "segments")
		b.ReportMetric(float64(inline), "inline-segments")
		b.ReportMetric(float64(mf.Size)/1e6, "session-MB")
	}
}

// BenchmarkSyncLeaseTakeover: SESSCTL_LEASE_ROUNDS (5) times, a child
// process (host-a) holds a session's lease (TTL SESSCTL_LEASE_TTL_MS,
// 5,000) and appends; this process (host-b) is refused, opens with Wait,
// and the child is killed with SIGKILL; it reports the time from the kill
// to the takeover (median and largest) and the TTL.
func BenchmarkSyncLeaseTakeover(b *testing.B) {
	rounds := envInt(b, "SESSCTL_LEASE_ROUNDS", 5)
	ttl := time.Duration(envInt(b, "SESSCTL_LEASE_TTL_MS", 5000)) * time.Millisecond
	srv := testenv.MinIO(b)
	be := s3be(srv)
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		a := benchMachine(b, srv, filepath.Join(benchTemp(b), "a"))
		bm := benchMachine(b, srv, filepath.Join(benchTemp(b), "b"))
		bm.opts.Remote = a.opts.Remote
		a.opts.Host, bm.opts.Host = "host-a", "host-b"
		path := a.newSession(b, "/bench/lease", 1)
		a.run(b, "push")
		bm.run(b, "pull")
		bp := sessionFiles(b, bm.agentDir)[filepath.Base(path)]
		var took []time.Duration
		refusedNamed := 0
		for round := range rounds {
			ready := filepath.Join(benchTemp(b), "ready")
			job, _ := json.Marshal(leaseJob{Remote: a.opts.Remote, AgentDir: a.agentDir, Path: path, Host: "host-a", Ready: ready, TTL: ttl})
			cmd := testenv.Command("leaseHolder")
			cmd.Env = append(cmd.Env, be.srv.Env()...)
			cmd.Env = append(cmd.Env, "SESSCTL_TEST_LEASE="+string(job))
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			for {
				if _, err := os.Stat(ready); err == nil {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			xb := replica.NewReplicator(bm.remote(b), replica.ReplicatorOptions{Lease: true, LeaseTTL: ttl, Command: "taker"})
			stb := openStore(b, engine.StoreOptions{AgentDir: bm.agentDir, Replicator: xb, Sync: engine.SyncNone})
			_, err := stb.Open(ctx, bp, engine.OpenOptions{})
			var le *engine.LockedError
			if errors.As(err, &le) && le.Owner != nil && le.Owner.Host == "host-a" && le.Owner.PID == cmd.Process.Pid {
				refusedNamed++
			}
			got := make(chan error, 1)
			var sb *engine.Session
			go func() {
				var err error
				sb, err = stb.Open(ctx, bp, engine.OpenOptions{Wait: true})
				got <- err
			}()
			time.Sleep(time.Duration(round+1) * ttl / time.Duration(rounds+1))
			killed := time.Now()
			cmd.Process.Kill()
			cmd.Wait()
			if err := <-got; err != nil {
				b.Fatal(err)
			}
			took = append(took, time.Since(killed))
			sb.Close()
			xb.Close()
			a.run(b, "sync")
			bm.run(b, "sync")
		}
		sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
		b.ReportMetric(float64(ttl.Milliseconds()), "ttl-ms")
		b.ReportMetric(float64(took[len(took)/2].Milliseconds()), "takeover-median-ms")
		b.ReportMetric(float64(took[len(took)-1].Milliseconds()), "takeover-max-ms")
		b.ReportMetric(float64(refusedNamed), "refused-naming-holder")
		b.ReportMetric(float64(rounds), "rounds")
	}
}

// BenchmarkSyncServerPuts measures what the fleet benchmark rests on:
// how many conditional PUTs of manifest-sized objects (1 KB, new keys)
// MinIO on loopback takes a second from SESSCTL_PUT_PARALLEL (32, the
// replicator's Parallel) writers at once, for SESSCTL_PUT_SECONDS (10),
// and, in a second phase as long, PUTs and DELETEs of the keys written
// in turn (a replicator's steady state).
func BenchmarkSyncServerPuts(b *testing.B) {
	par := envInt(b, "SESSCTL_PUT_PARALLEL", 32)
	secs := envInt(b, "SESSCTL_PUT_SECONDS", 10)
	srv := testenv.MinIO(b)
	body := []byte(strings.Repeat("x", 1000))
	for i := 0; i < b.N; i++ {
		remote := remoteFor(b, s3be(srv))
		c := clientFor(b, s3be(srv), remote)
		phase := func(del bool) float64 {
			var n atomic.Int64
			stop := time.Now().Add(time.Duration(secs) * time.Second)
			var wg sync.WaitGroup
			for w := range par {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for k := 0; time.Now().Before(stop); k++ {
						key := "m/pi/w" + strconv.Itoa(w) + "/" + strconv.FormatBool(del) + strconv.Itoa(k)
						if _, err := c.PutIfAbsent(context.Background(), key, strings.NewReader(string(body)), int64(len(body))); err != nil {
							b.Error(err)
							return
						}
						n.Add(1)
						if del {
							if err := c.Delete(context.Background(), key); err != nil {
								b.Error(err)
								return
							}
							n.Add(1)
						}
					}
				}()
			}
			wg.Wait()
			return float64(n.Load()) / float64(secs)
		}
		b.ReportMetric(loadavg(), "load-before")
		b.ReportMetric(phase(false), "puts/s")
		b.ReportMetric(phase(true), "put+delete-requests/s")
		b.ReportMetric(loadavg(), "load-after")
	}
}
