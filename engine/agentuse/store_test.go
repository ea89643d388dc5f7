package agentuse_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/oklog/ulid/v2"

	"github.com/sessctl/sessctl/engine/agentuse"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
)

// auTestStore is a store in a fresh temporary directory with a settable
// clock and real ULIDs.
type auTestStore struct {
	*agentuse.Store
	root string
	mu   sync.Mutex
	now  int64
}

func newAUTestStore(t *testing.T, o agentuse.StoreOptions) *auTestStore {
	t.Helper()
	s := &auTestStore{root: filepath.Join(t.TempDir(), "session"), now: 1795293774000}
	o.Dir = s.root
	if o.Now == nil {
		o.Now = func() time.Time {
			s.mu.Lock()
			defer s.mu.Unlock()
			return time.UnixMilli(s.now)
		}
	}
	st, err := agentuse.OpenStore(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	s.Store = st
	return s
}

// collectSessions collects Store.Sessions: every session, up to the first
// error yielded, and that error.
func collectSessions(ctx context.Context, s *agentuse.Store) ([]*agentuse.Info, error) {
	var out []*agentuse.Info
	for x, err := range s.Sessions(ctx) {
		if err != nil {
			return out, err
		}
		out = append(out, x)
	}
	return out, nil
}

func (s *auTestStore) set(ms int64) {
	s.mu.Lock()
	s.now = ms
	s.mu.Unlock()
}

var auSpec = agentuse.SessionSpec{
	Agent:   agentuse.Agent{ID: "agents/manager", Name: "manager"},
	Model:   "anthropic:claude-sonnet-4-5",
	Version: "0.15.0",
	Config:  json.RawMessage(`{"maxSteps":100}`),
	Project: agentuse.Project{Root: "/p", Cwd: "/p"},
}

func mustCreate(t *testing.T, s *agentuse.Store, spec agentuse.SessionSpec) *agentuse.Session {
	t.Helper()
	w, err := s.Create(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return w
}

func mustMessage(t *testing.T, w *agentuse.Session) string {
	t.Helper()
	id, err := w.AddMessage(agentuse.MessageSpec{Task: "do it", ModelID: "anthropic:claude-sonnet-4-5", Cwd: "/p", Root: "/p"})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAgentUseWriterFiles checks the bytes of a small session written
// through the typed API, independent of the corpus.
func TestAgentUseWriterFiles(t *testing.T) {
	t.Parallel()
	ids := []string{"01M7ZXJ093A1K5TPE8N7MS01CN", "01M7ZXJ097NY47W4P7E5X53TK7", "01M7ZXJ09CPXSR6AGN7KR6KS7W"}
	s := newAUTestStore(t, agentuse.StoreOptions{NewID: func() string { id := ids[0]; ids = ids[1:]; return id }})
	s.set(1000)
	w := mustCreate(t, s.Store, auSpec)
	s.set(1001)
	msg := mustMessage(t, w)
	s.set(1002)
	part, err := w.AddPart(msg, agentuse.TextPart("Hello <b>&</b>\u2028 \"q\"\t", w.Now()))
	if err != nil {
		t.Fatal(err)
	}
	s.set(1003)
	if err := w.FinishText(msg, part, "Hello <b>&</b>\u2028 \"q\"\t \n"); err != nil {
		t.Fatal(err)
	}
	s.set(1004)
	if err := w.SetError(agentuse.SessionError{Code: "EXECUTION_ERROR", Message: "Bad Request", StatusCode: 400}); err != nil {
		t.Fatal(err)
	}
	s.set(1005)
	if err := w.SetStatus(agentuse.StatusCompleted); err != nil {
		t.Fatal(err)
	}
	if err := w.SetTokens(msg, agentuse.Tokens{Input: 10, Output: 2, CacheRead: 4}); err != nil {
		t.Fatal(err)
	}
	if err := w.CompleteMessage(msg); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(s.root, "01M7ZXJ093A1K5TPE8N7MS01CN-agents-manager")
	cases := []struct{ file, want string }{
		{"session.json", `{
  "agent": {
    "id": "agents/manager",
    "name": "manager",
    "isSubAgent": false
  },
  "model": "anthropic:claude-sonnet-4-5",
  "version": "0.15.0",
  "config": {
    "maxSteps": 100
  },
  "project": {
    "root": "/p",
    "cwd": "/p"
  },
  "id": "01M7ZXJ093A1K5TPE8N7MS01CN",
  "status": "completed",
  "trigger": "manual",
  "time": {
    "created": 1000,
    "updated": 1005
  },
  "error": {
    "code": "EXECUTION_ERROR",
    "message": "Bad Request",
    "statusCode": 400,
    "time": 1004
  }
}`},
		{"01M7ZXJ097NY47W4P7E5X53TK7/message.json", `{
  "id": "01M7ZXJ097NY47W4P7E5X53TK7",
  "sessionID": "01M7ZXJ093A1K5TPE8N7MS01CN",
  "time": {
    "created": 1001,
    "completed": 1005
  },
  "user": {
    "prompt": {
      "task": "do it"
    }
  },
  "assistant": {
    "system": [],
    "modelID": "anthropic:claude-sonnet-4-5",
    "providerID": "anthropic",
    "mode": "build",
    "path": {
      "cwd": "/p",
      "root": "/p"
    },
    "cost": 0,
    "tokens": {
      "input": 10,
      "output": 2,
      "reasoning": 0,
      "cache": {
        "read": 4,
        "write": 0
      }
    }
  }
}`},
		{"01M7ZXJ097NY47W4P7E5X53TK7/part/01M7ZXJ09CPXSR6AGN7KR6KS7W.json", "{\n  \"type\": \"text\",\n  \"text\": \"Hello <b>&</b>\u2028 \\\"q\\\"\",\n  \"time\": {\n    \"start\": 1002,\n    \"end\": 1003\n  },\n  \"id\": \"01M7ZXJ09CPXSR6AGN7KR6KS7W\",\n  \"sessionID\": \"01M7ZXJ093A1K5TPE8N7MS01CN\",\n  \"messageID\": \"01M7ZXJ097NY47W4P7E5X53TK7\"\n}"},
	}
	for _, c := range cases {
		if got := readFile(t, filepath.Join(dir, c.file)); got != c.want {
			t.Errorf("%s:\n%s", c.file, cmp.Diff(c.want, got))
		}
	}
	if err := w.ClearError(); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, "session.json")); strings.Contains(got, "error") {
		t.Errorf("ClearError left the error:\n%s", got)
	}
}

// TestAgentUseTypedParts rebuilds corpus part files with the typed
// constructors and transitions, with the corpus's ids and clock: the key
// orders AgentUse's runtime uses must come out byte for byte.
func TestAgentUseTypedParts(t *testing.T) {
	t.Parallel()
	dir := testenv.Corpus(t, "agentuse")
	root := filepath.Join(dir, "api-driven", "xdg-data", "agentuse", "project", "a451240a36c0c105", "session")
	const (
		manager = "01M7ZXJ093A1K5TPE8N7MS01CN-agents-manager/01M7ZXJ097NY47W4P7E5X53TK7/part/"
		sink    = "01M7ZXJ0KC9S183XADC88B6B34-agents-kitchen-sink/01M7ZXJ0KG0WMK94NBQJQ4D2QD/part/"
		deploy  = "01M7ZXJ0FRDFPJGYYVRCV1NP1V-agents-deployer/01M7ZXJ0FSDVNBJB7A86EWP244/part/"
	)
	type h = auPartHarness
	cases := []struct {
		name string
		file string
		run  func(h *h)
	}{
		{"log", manager + "01M7ZXJ09CPXSR6AGN7KR6KS7W.json", func(h *h) {
			h.add(agentuse.LogPart(h.s("level"), h.s("message"), "", h.t("time", "start")))
		}},
		{"log with tool id", manager + "01M7ZXJ0AWVJJ2YE5NQ542R0N7.json", func(h *h) {
			h.add(agentuse.LogPart(h.s("level"), h.s("message"), h.s("toolId"), h.t("time", "start")))
		}},
		{"reasoning finished", manager + "01M7ZXJ09FBYHDHNH5C0TXQ0EV.json", func(h *h) {
			h.add(agentuse.ReasoningPart("partial", nil, h.t("time", "start")))
			h.at(h.t("time", "end"))
			h.check(h.w.FinishText(h.msg, h.part, h.s("text")+"  \n"))
		}},
		{"reasoning with metadata", sink + "01M7ZXJ0KQ3VESXXJGYHZ072YV.json", func(h *h) {
			h.add(agentuse.ReasoningPart("", h.raw("metadata"), h.t("time", "start")))
			h.at(h.t("time", "end"))
			h.check(h.w.FinishText(h.msg, h.part, h.s("text")))
		}},
		{"text streamed and finished", manager + "01M7ZXJ09XQDDV1J0N1N9TJBZ7.json", func(h *h) {
			h.add(agentuse.TextPart("I", h.t("time", "start")))
			h.check(h.w.UpdatePart(h.msg, h.part, agentuse.Field{Key: "text", Value: "I will"}))
			h.at(h.t("time", "end"))
			h.check(h.w.FinishText(h.msg, h.part, h.s("text")+"\n\n"))
		}},
		{"synthetic user text", deploy + "01M7ZXJ0GXDYFGVX9G9NYFH8WE.json", func(h *h) {
			h.add(agentuse.UserTextPart(h.s("text"), h.t("time", "start"), h.t("time", "end")))
		}},
		{"tool completed", manager + "01M7ZXJ0A8SFA6YCR9RH789HA9.json", func(h *h) {
			h.add(agentuse.ToolPart(h.s("callID"), h.s("tool"), h.raw("state", "input"), h.t("state", "time", "start")))
			h.at(h.t("state", "time", "end"))
			h.check(h.w.CompleteTool(h.msg, h.part, h.raw("state", "output"), nil))
		}},
		{"subagent tool completed with metadata", manager + "01M7ZXJ0B8GKJGSRWV249PVZWJ.json", func(h *h) {
			h.add(agentuse.ToolPart(h.s("callID"), h.s("tool"), h.raw("state", "input"), h.t("state", "time", "start")))
			h.at(h.t("state", "time", "end"))
			h.check(h.w.CompleteTool(h.msg, h.part, h.raw("state", "output"), h.raw("state", "metadata")))
		}},
		{"tool error", manager + "01M7ZXJ0ANS0GP3QRH2ZKQ4ZA5.json", func(h *h) {
			h.add(agentuse.ToolPart(h.s("callID"), h.s("tool"), h.raw("state", "input"), h.t("state", "time", "start")))
			h.at(h.t("state", "time", "end"))
			h.check(h.w.FailTool(h.msg, h.part, h.s("state", "error"), nil))
		}},
		{"tool suspended", "01M7ZXJ0ED68DDAAC8WA52HGC9-agents-publisher/01M7ZXJ0EE0M2ZPBP3SX7T1K0M/part/01M7ZXJ0ERBK63MD274NHT633Q.json", func(h *h) {
			h.add(agentuse.ToolPart(h.s("callID"), h.s("tool"), h.raw("state", "input"), h.t("state", "suspendedAt")))
			h.check(h.w.SuspendTool(h.msg, h.part, h.raw("state", "resumePayload")))
		}},
		{"subagent wait", "01M7ZXJ0H8VSDF77BQYZNFSQ9Y-agents-orchestrator/01M7ZXJ0H8GW6F10GV288RHS66/part/01M7ZXJ0H9QF4J085R0BPM2F53.json", func(h *h) {
			h.add(agentuse.ToolPart(h.s("callID"), h.s("tool"), h.raw("state", "input"), h.t("state", "suspendedAt").Add(-3*time.Millisecond)))
			h.at(h.t("state", "suspendedAt"))
			h.check(h.w.SuspendTool(h.msg, h.part, h.raw("state", "resumePayload")))
		}},
		{"tool resumed after approval", deploy + "01M7ZXJ0FV4ZVAJFZD8TYWFAW0.json", func(h *h) {
			h.add(agentuse.ToolPart(h.s("callID"), h.s("tool"), h.raw("state", "input"), h.t("state", "time", "start")))
			h.check(h.w.SuspendTool(h.msg, h.part, h.raw("state", "metadata", "resumePayload")))
			h.at(h.t("state", "time", "end"))
			h.check(h.w.ResumeTool(h.msg, h.part, h.raw("state", "output")))
		}},
		{"tool stopped", "01M7ZXJ0JJQGMSM3D6BY0DN83S-agents-watcher/01M7ZXJ0JMYSWP92QX435T6C6R/part/01M7ZXJ0JTY2PM14YWVZKT4410.json", func(h *h) {
			h.add(agentuse.ToolPart(h.s("callID"), h.s("tool"), h.raw("state", "input"), h.t("state", "time", "start")))
			h.at(h.t("state", "time", "end"))
			res, err := h.w.Stop(agentuse.StopOptions{})
			h.check(err)
			if !res.Stopped || res.WasStatus != agentuse.StatusRunning {
				h.tt.Errorf("Stop = %+v", res)
			}
		}},
		{"error part", "01M7ZXJ0J0261ZRMRRXKE5RWPP-agents-flaky/01M7ZXJ0J1NPVC5ABSGJD5K6E2/part/01M7ZXJ0JGG8QW1P1MH83TFHV6.json", func(h *h) {
			code, _ := strconv.Atoi(string(h.raw("statusCode")))
			h.add(agentuse.ErrorPart(agentuse.PartError{
				Source: h.s("source"), Message: h.s("message"), Code: h.s("code"), Detail: h.s("detail"), StatusCode: code,
			}, h.t("time", "start")))
		}},
		{"compaction", manager + "01M7ZXJ0DV55Y1BWYR9C4X95WW.json", func(h *h) {
			pct := float64(h.n("usagePercentBefore"))
			if f, err := strconv.ParseFloat(string(h.raw("usagePercentBefore")), 64); err == nil {
				pct = f
			}
			h.add(agentuse.CompactionPart(agentuse.Compaction{
				Reason: h.s("reason"), TokensBefore: h.n("tokensBefore"), TokensAfter: h.n("tokensAfter"),
				MessagesBefore: h.n("messagesBefore"), MessagesAfter: h.n("messagesAfter"), UsagePercentBefore: &pct,
			}, h.t("time", "start")))
		}},
		{"learning", manager + "01M7ZXJ0EB78V2ZT8R5Y6MH0XS.json", func(h *h) {
			var titles []string
			h.check(json.Unmarshal(h.raw("titles"), &titles))
			h.add(agentuse.LearningPart(agentuse.Learning{
				Status: h.s("status"), Source: h.s("source"), Count: h.n("count"), Titles: titles,
			}, h.t("time", "start")))
		}},
		{"file", sink + "01M7ZXJ0KKTP90AJ1DDHX2XXNZ.json", func(h *h) {
			h.add(agentuse.FilePart(agentuse.File{Mime: h.s("mime"), Filename: h.s("filename"), URL: h.s("url"), Source: h.raw("source")}))
		}},
		{"agent", sink + "01M7ZXJ0KMDS37K3HTSJ9E5AVB.json", func(h *h) {
			h.add(agentuse.AgentPart(h.s("name"), h.raw("source")))
		}},
		{"step-start", sink + "01M7ZXJ0KHYY30JS65RHTKY16Z.json", func(h *h) {
			h.add(agentuse.StepStartPart())
		}},
		{"step-finish", sink + "01M7ZXJ0KP9WDWH9VBBB4DGXY8.json", func(h *h) {
			f, _ := strconv.ParseFloat(string(h.raw("cost")), 64)
			h.add(agentuse.StepFinishPart(f, agentuse.Tokens{
				Input: h.n("tokens", "input"), Output: h.n("tokens", "output"), Reasoning: h.n("tokens", "reasoning"),
				CacheRead: h.n("tokens", "cache", "read"), CacheWrite: h.n("tokens", "cache", "write"),
			}))
		}},
		{"snapshot", sink + "01M7ZXJ0KPT9018CW788X3DZ88.json", func(h *h) {
			h.add(agentuse.SnapshotPart(h.s("snapshot")))
		}},
		{"patch", sink + "01M7ZXJ0KQA8K04WWD9B134420.json", func(h *h) {
			var files []string
			h.check(json.Unmarshal(h.raw("files"), &files))
			h.add(agentuse.PatchPart(h.s("hash"), files))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			want := readFile(t, filepath.Join(root, filepath.FromSlash(c.file)))
			h := newAUPartHarness(t, []byte(want))
			c.run(h)
			got := readFile(t, h.path())
			if got != want {
				t.Errorf("(-corpus +written):\n%s", cmp.Diff(want, got))
			}
		})
	}
}

// auPartHarness writes one part into a fresh store with the ids of a
// corpus part file, whose values it offers to the test case.
type auPartHarness struct {
	tt    *testing.T
	st    *auTestStore
	w     *agentuse.Session
	msg   string
	part  string
	want  []byte
	queue []string
}

func newAUPartHarness(t *testing.T, want []byte) *auPartHarness {
	h := &auPartHarness{tt: t, want: want}
	_, v := auMembers(t, want)
	sid, mid, pid := auStr(v["sessionID"]), auStr(v["messageID"]), auStr(v["id"])
	h.queue = []string{sid, mid, pid}
	h.st = newAUTestStore(t, agentuse.StoreOptions{NewID: func() string {
		if len(h.queue) == 0 {
			t.Fatal("no id queued")
		}
		id := h.queue[0]
		h.queue = h.queue[1:]
		return id
	}})
	h.w = mustCreate(t, h.st.Store, auSpec)
	h.msg = mustMessage(t, h.w)
	return h
}

func (h *auPartHarness) path() string {
	return filepath.Join(h.w.Dir(), h.msg, "part", h.part+".json")
}

func (h *auPartHarness) check(err error) {
	h.tt.Helper()
	if err != nil {
		h.tt.Fatal(err)
	}
}

func (h *auPartHarness) add(p agentuse.Part) {
	h.tt.Helper()
	id, err := h.w.AddPart(h.msg, p)
	h.check(err)
	h.part = id
}

func (h *auPartHarness) at(ms time.Time) { h.st.set(ms.UnixMilli()) }

// raw returns the value at a path of keys in the corpus file.
func (h *auPartHarness) raw(path ...string) json.RawMessage {
	h.tt.Helper()
	v := json.RawMessage(h.want)
	for _, k := range path {
		_, m := auMembers(h.tt, v)
		var ok bool
		if v, ok = m[k]; !ok {
			h.tt.Fatalf("corpus file has no %v", path)
		}
	}
	return v
}

func (h *auPartHarness) s(path ...string) string { return auStr(h.raw(path...)) }
func (h *auPartHarness) n(path ...string) int64  { return auNum(h.raw(path...)) }

// t returns a time from the corpus file and sets the clock to it.
func (h *auPartHarness) t(path ...string) time.Time {
	tm := time.UnixMilli(h.n(path...))
	h.at(tm)
	return tm
}

// TestAgentUseConcurrentWriters updates parts and the session from two
// goroutines, once sharing one writer and once with a writer each (the
// second waits for the lock): every update survives. Without the lock,
// AgentUse's read-modify-write loses one of two concurrent updates.
func TestAgentUseConcurrentWriters(t *testing.T) {
	t.Parallel()
	const n = 25
	for _, shared := range []bool{true, false} {
		t.Run(fmt.Sprintf("shared=%v", shared), func(t *testing.T) {
			t.Parallel()
			s := newAUTestStore(t, agentuse.StoreOptions{Sync: agentuse.SyncNone, Wait: true})
			w := mustCreate(t, s.Store, auSpec)
			msg := mustMessage(t, w)
			part, err := w.AddPart(msg, agentuse.TextPart("x", w.Now()))
			if err != nil {
				t.Fatal(err)
			}
			id := w.ID()
			if !shared {
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
			}
			var wg sync.WaitGroup
			errs := make(chan error, 2)
			for g := range 2 {
				wg.Go(func() {
					ww := w
					if !shared {
						var err error
						if ww, err = s.Open(context.Background(), id); err != nil {
							errs <- err
							return
						}
						defer ww.Close()
					}
					for i := range n {
						k := fmt.Sprintf("g%d_%02d", g, i)
						if err := ww.UpdatePart(msg, part, agentuse.Field{Key: k, Value: i}); err != nil {
							errs <- err
							return
						}
						if err := ww.UpdateSession(agentuse.Field{Key: k, Value: true}); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			checkKeys(t, filepath.Join(s.root, filepath.Base(w.Dir()), msg, "part", part+".json"), 2, n)
			checkKeys(t, filepath.Join(s.root, filepath.Base(w.Dir()), "session.json"), 2, n)
		})
	}
}

// checkKeys checks that file holds every key g<g>_<i>.
func checkKeys(t *testing.T, file string, groups, n int) {
	t.Helper()
	keys, _ := auMembers(t, []byte(readFile(t, file)))
	have := map[string]bool{}
	for _, k := range keys {
		have[k] = true
	}
	var missing []string
	for g := range groups {
		for i := range n {
			if k := fmt.Sprintf("g%d_%02d", g, i); !have[k] {
				missing = append(missing, k)
			}
		}
	}
	if len(missing) > 0 {
		t.Errorf("%s lost %d updates: %v", file, len(missing), missing)
	}
}

// writer is the child TestAgentUseConcurrentProcesses starts (see
// main_test.go): it opens the session named by AU_ROOT and AU_ID as a
// writer (waiting for the lock) AU_N times and applies its updates.
func writer() int {
	root, id, msg, part := os.Getenv("AU_ROOT"), os.Getenv("AU_ID"), os.Getenv("AU_MSG"), os.Getenv("AU_PART")
	g, _ := strconv.Atoi(os.Getenv("AU_G"))
	n, _ := strconv.Atoi(os.Getenv("AU_N"))
	st, err := agentuse.OpenStore(context.Background(), agentuse.StoreOptions{Dir: root, Sync: agentuse.SyncNone, Wait: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// Each update opens its own writer, so the two processes interleave.
	for i := range n {
		w, err := st.Open(context.Background(), id)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		k := fmt.Sprintf("g%d_%02d", g, i)
		err = w.UpdatePart(msg, part, agentuse.Field{Key: k, Value: i})
		if err == nil {
			err = w.UpdateSession(agentuse.Field{Key: k, Value: true})
		}
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

func TestAgentUseConcurrentProcesses(t *testing.T) {
	t.Parallel()
	const n = 15
	s := newAUTestStore(t, agentuse.StoreOptions{Sync: agentuse.SyncNone})
	w := mustCreate(t, s.Store, auSpec)
	msg := mustMessage(t, w)
	part, err := w.AddPart(msg, agentuse.TextPart("x", w.Now()))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for g := range 2 {
		cmd := testenv.Command("writer")
		cmd.Env = append(cmd.Env, "AU_ROOT="+s.root, "AU_ID="+w.ID(),
			"AU_MSG="+msg, "AU_PART="+part, "AU_G="+strconv.Itoa(g), "AU_N="+strconv.Itoa(n))
		out := new(bytes.Buffer)
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		outs = append(outs, out)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("helper %d: %v\n%s", i, err, outs[i])
		}
	}
	checkKeys(t, filepath.Join(w.Dir(), msg, "part", part+".json"), 2, n)
	checkKeys(t, filepath.Join(w.Dir(), "session.json"), 2, n)
}

func TestAgentUseLock(t *testing.T) {
	t.Parallel()
	s := newAUTestStore(t, agentuse.StoreOptions{})
	w := mustCreate(t, s.Store, auSpec)
	lockFile := filepath.Join(w.Dir(), layout.AgentUseLockFile)
	ownerFile := filepath.Join(w.Dir(), "session.owner")
	for _, f := range []string{lockFile, ownerFile} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("while open: %v", err)
		}
	}
	_, err := s.Open(context.Background(), w.ID())
	if !errors.Is(err, agentuse.ErrLocked) {
		t.Errorf("second writer: %v, want ErrLocked", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddMessage(agentuse.MessageSpec{}); !errors.Is(err, agentuse.ErrClosed) {
		t.Errorf("AddMessage after Close: %v, want ErrClosed", err)
	}
	if err := w.SetStatus("x"); !errors.Is(err, agentuse.ErrClosed) {
		t.Errorf("SetStatus after Close: %v, want ErrClosed", err)
	}
	w2, err := s.Open(context.Background(), w.ID())
	if err != nil {
		t.Fatalf("writer after Close: %v", err)
	}
	defer w2.Close()
	// The lock files are invisible to AgentUse's readers and to ours.
	xs, err := collectSessions(context.Background(), s.Store)
	if err != nil || len(xs) != 1 {
		t.Fatalf("Sessions = %v, %v", xs, err)
	}
	c, err := s.Read(context.Background(), xs[0])
	if err != nil || len(c.Problems) != 0 || len(c.Messages) != 0 {
		t.Errorf("Read = %+v, %v", c, err)
	}
}

func TestAgentUseUpdateErrors(t *testing.T) {
	t.Parallel()
	s := newAUTestStore(t, agentuse.StoreOptions{})
	w := mustCreate(t, s.Store, auSpec)
	msg := mustMessage(t, w)
	missing := ulid.Make().String()
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"update missing part", w.UpdatePart(msg, missing, agentuse.Field{Key: "text", Value: "x"}), agentuse.ErrNotFound},
		{"update missing message", w.UpdateMessage(missing, agentuse.MessageUpdate{Time: []agentuse.Field{{Key: "completed", Value: 1}}}), agentuse.ErrNotFound},
		{"part of missing message", addPartErr(w, missing), agentuse.ErrNotFound},
		{"complete a text part", w.CompleteTool(msg, mustPart(t, w, msg), "out", nil), nil},
		{"hostile part id", w.UpdatePart(msg, "../../session", agentuse.Field{Key: "x", Value: 1}), layout.ErrUnsafeName},
		{"hostile message id", w.UpdatePart("..", missing), layout.ErrUnsafeName},
		{"change a part id", w.UpdatePart(msg, missing, agentuse.Field{Key: "id", Value: "x"}), nil},
	}
	for _, c := range cases {
		if c.err == nil || (c.want != nil && !errors.Is(c.err, c.want)) {
			t.Errorf("%s: %v, want an error matching %v", c.name, c.err, c.want)
		}
	}
	if _, err := w.AddPart(msg, agentuse.Part{Type: "text", Fields: []agentuse.Field{{Key: "messageID", Value: "x"}}}); err == nil {
		t.Error("AddPart accepted a messageID field")
	}
}

func addPartErr(w *agentuse.Session, msg string) error {
	_, err := w.AddPart(msg, agentuse.StepStartPart())
	return err
}

func mustPart(t *testing.T, w *agentuse.Session, msg string) string {
	t.Helper()
	id, err := w.AddPart(msg, agentuse.TextPart("t", w.Now()))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestAgentUseHostileNames makes sessions with hostile agent names and
// tries hostile ids: everything written stays in the store.
func TestAgentUseHostileNames(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	root := filepath.Join(base, "store", "session")
	bad := []string{"", "../x", "..", "../../../../etc/passwd", "a/b", `a\b`, "\x00", "01M7ZXJ093A1K5TPE8N7MS01CN/..", "01m7zxj093a1k5tpe8n7ms01cn"}
	var queue []string
	st, err := agentuse.OpenStore(context.Background(), agentuse.StoreOptions{
		Dir: root,
		NewID: func() string {
			if len(queue) > 0 {
				id := queue[0]
				queue = queue[1:]
				return id
			}
			return ulid.Make().String()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"../../../../../tmp/evil", "..", ".", "/etc/passwd", `..\..\evil`, "a\x00b", "İ../..", strings.Repeat("../", 100)}
	for _, name := range names {
		spec := auSpec
		spec.Agent.ID = name
		w, err := st.Create(context.Background(), spec)
		if err != nil {
			t.Errorf("agent %q: %v", name, err)
			continue
		}
		if d := filepath.Dir(w.Dir()); d != root {
			t.Errorf("agent %q: session in %s, want it in %s", name, w.Dir(), root)
		}
		msg := mustMessage(t, w)
		if _, err := w.WriteToolOutput(msg, name, "out"); err != nil {
			t.Errorf("tool %q: %v", name, err)
		}
		child, err := w.CreateSubagent(context.Background(), spec)
		if err != nil {
			t.Errorf("subagent %q: %v", name, err)
		} else {
			if d := filepath.Dir(child.Dir()); d != filepath.Join(w.Dir(), "subagent") {
				t.Errorf("subagent %q in %s", name, child.Dir())
			}
			child.Close()
		}
		for _, id := range bad {
			if spec.ID = id; id != "" { // "" draws a fresh id
				if _, err := st.Create(context.Background(), spec); !errors.Is(err, layout.ErrUnsafeName) {
					t.Errorf("session id %q: %v, want ErrUnsafeName", id, err)
				}
			}
			queue = []string{id}
			if _, err := w.AddMessage(agentuse.MessageSpec{}); err == nil {
				t.Errorf("message id %q accepted", id)
			}
			queue = []string{id}
			if _, err := w.AddPart(msg, agentuse.StepStartPart()); err == nil {
				t.Errorf("part id %q accepted", id)
			}
			queue = []string{id}
			if _, err := w.WriteToolOutput(msg, "bash", "x"); err == nil {
				t.Errorf("artifact id %q accepted", id)
			}
			if _, err := w.AddPart(id, agentuse.StepStartPart()); err == nil {
				t.Errorf("message id %q accepted by AddPart", id)
			}
		}
		w.Close()
	}
	if _, err := st.Open(context.Background(), base); !errors.Is(err, layout.ErrUnsafeName) {
		t.Errorf("Open outside the store: %v", err)
	}
	if _, err := st.Resolve(context.Background(), "../.."); !errors.Is(err, agentuse.ErrNotFound) {
		t.Errorf("Resolve(../..): %v", err)
	}
	// Nothing but the store was created in base.
	ents, err := os.ReadDir(base)
	if err != nil || len(ents) != 1 || ents[0].Name() != "store" {
		t.Errorf("base holds %v, %v", ents, err)
	}
	// A symbolic link planted in the store is not written through.
	testenv.SkipOnWindows(t, "symbolic links need a privilege on Windows, and opens have no O_NOFOLLOW")
	outside := t.TempDir()
	w := mustCreate(t, st, auSpec)
	msgLink := ulid.Make().String()
	if err := os.Symlink(outside, filepath.Join(w.Dir(), msgLink)); err != nil {
		t.Skip(err)
	}
	queue = []string{msgLink}
	if _, err := w.AddMessage(agentuse.MessageSpec{}); !errors.Is(err, vfs.ErrSymlink) {
		t.Errorf("message dir is a symlink: %v, want ErrSymlink", err)
	}
	if _, err := w.AddPart(msgLink, agentuse.StepStartPart()); err == nil {
		t.Error("AddPart wrote through a symlinked message directory")
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("wrote outside the store: %v", ents)
	}
}

// TestAgentUseDamagedFiles: a 0-byte or garbage file is reported with its
// path and the rest of the session still reads.
func TestAgentUseDamagedFiles(t *testing.T) {
	t.Parallel()
	s := newAUTestStore(t, agentuse.StoreOptions{Sync: agentuse.SyncNone})
	ctx := context.Background()
	w := mustCreate(t, s.Store, auSpec)
	msg := mustMessage(t, w)
	good := mustPart(t, w, msg)
	empty := mustPart(t, w, msg)
	garbage := mustPart(t, w, msg)
	msg2 := mustMessage(t, w)
	mustPart(t, w, msg2)
	partPath := func(m, p string) string { return filepath.Join(w.Dir(), m, "part", p+".json") }
	writeRaw(t, partPath(msg, empty), "")
	writeRaw(t, partPath(msg, garbage), `{"type":"text","text":"x"}garbage`)
	writeRaw(t, filepath.Join(w.Dir(), msg2, "message.json"), "[1,2")
	writeRaw(t, filepath.Join(w.Dir(), "tools.json"), "null")
	// Leftovers that readers must ignore.
	writeRaw(t, partPath(msg, good)+".1234.abcd.tmp", "{")
	writeRaw(t, partPath(msg, good)+vfs.TempSuffix+"00ff", "{")
	writeRaw(t, filepath.Join(w.Dir(), msg, "part", "notes.txt"), "x")
	w2 := mustCreate(t, s.Store, auSpec)
	writeRaw(t, filepath.Join(w2.Dir(), "session.json"), "")

	x, err := s.Resolve(ctx, w.ID())
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Read(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	var probs []string
	for _, p := range c.Problems {
		if !errors.Is(p, agentuse.ErrCorrupt) {
			t.Errorf("problem %v does not match ErrCorrupt", p)
		}
		rel, _ := filepath.Rel(w.Dir(), p.Path)
		probs = append(probs, filepath.ToSlash(rel))
	}
	sort.Strings(probs)
	wantProbs := []string{msg + "/part/" + empty + ".json", msg + "/part/" + garbage + ".json", msg2 + "/message.json", "tools.json"}
	sort.Strings(wantProbs)
	if diff := cmp.Diff(wantProbs, probs); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if len(c.Messages) != 2 || c.Messages[0].ID != msg || len(c.Messages[0].Parts) != 1 || c.Messages[0].Parts[0].ID != good {
		t.Errorf("messages read: %+v", c.Messages)
	}
	if c.Messages[1].Err == nil || len(c.Messages[1].Parts) != 1 {
		t.Errorf("damaged message: %+v", c.Messages[1])
	}

	// The session with an empty session.json is listed last and found by
	// its directory name's id.
	list, err := s.List(ctx, agentuse.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[1].ID != w2.ID() || !errors.Is(list[1].Err, agentuse.ErrCorrupt) {
		t.Errorf("list: %v", auSessionIDs(list))
	}
	bad, err := s.Resolve(ctx, w2.ID())
	if err != nil || bad.Err == nil {
		t.Errorf("Resolve damaged session: %v, %v", bad, err)
	}
}

func writeRaw(t *testing.T, p, data string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestAgentUseDiscovery checks spec section 7's rules on a hand-made
// store.
func TestAgentUseDiscovery(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ctx := context.Background()
	mk := func(rel, body string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		writeRaw(t, p, body)
	}
	sess := func(id, parent, agent string, created int, sub bool) string {
		p := ""
		if parent != "" {
			p = `"parentSessionID":"` + parent + `",`
		}
		return fmt.Sprintf(`{%s"agent":{"id":%q,"name":"n","isSubAgent":%v},"id":%q,"status":"completed","time":{"created":%d,"updated":%d}}`,
			p, agent, sub, id, created, created)
	}
	const a, b, c, d, e, f = "01AAAAAAAAAAAAAAAAAAAAAAAA", "01BBBBBBBBBBBBBBBBBBBBBBBB", "01CCCCCCCCCCCCCCCCCCCCCCCC",
		"01DDDDDDDDDDDDDDDDDDDDDDDD", "01EEEEEEEEEEEEEEEEEEEEEEEE", "01FFFFFFFFFFFFFFFFFFFFFFFF"
	mk(a+"-x/session.json", sess(a, "", "x", 100, false))
	// Children of a: created ties broken by agent.id (localeCompare), then id.
	mk(a+"-x/subagent/"+c+"-b/session.json", sess(c, a, "B", 200, true))
	mk(a+"-x/subagent/"+b+"-a/session.json", sess(b, a, "b", 200, true))
	mk(a+"-x/subagent/"+d+"-c/session.json", sess(d, a, "a-z", 200, true))
	// A grandchild is not a child of a.
	mk(a+"-x/subagent/"+b+"-a/subagent/"+e+"-e/session.json", sess(e, b, "e", 150, true))
	// Below a session only subagent/ is followed.
	mk(a+"-x/other/"+f+"-f/session.json", sess(f, "", "f", 300, false))
	// A stray directory is searched; its session needs no name pattern.
	mk("stray/deeper/anything/session.json", sess(f, "", "f", 50, false))
	// session.json as a directory does not make a session.
	if err := os.MkdirAll(filepath.Join(root, "notasession", "session.json"), 0o700); err != nil {
		t.Fatal(err)
	}
	mk("leftover.json.123.tmp", "{")

	st, err := agentuse.OpenStore(ctx, agentuse.StoreOptions{Dir: root})
	if err != nil {
		t.Fatal(err)
	}
	all, err := collectSessions(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	var rels []string
	for _, x := range all {
		rels = append(rels, x.RelDir)
	}
	want := []string{a + "-x", a + "-x/subagent/" + b + "-a", a + "-x/subagent/" + b + "-a/subagent/" + e + "-e",
		a + "-x/subagent/" + c + "-b", a + "-x/subagent/" + d + "-c", "stray/deeper/anything"}
	if diff := cmp.Diff(want, rels); diff != "" {
		t.Errorf("discovery (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{d, b, c}, auSessionIDs(all[0].Children)); diff != "" {
		t.Errorf("children of a (-want +got):\n%s", diff)
	}
	top, err := st.List(ctx, agentuse.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{a, f}, auSessionIDs(top)); diff != "" {
		t.Errorf("top-level list (-want +got):\n%s", diff)
	}
	withSubs, _ := st.List(ctx, agentuse.ListOptions{Subagents: true})
	if diff := cmp.Diff([]string{b, c, d, e, a, f}, auSessionIDs(withSubs)); diff != "" {
		t.Errorf("list with subagents (-want +got):\n%s", diff)
	}
	_, err = st.Resolve(ctx, "01")
	var amb *agentuse.AmbiguousError
	if !errors.As(err, &amb) || !errors.Is(err, agentuse.ErrAmbiguous) || len(amb.Candidates) != 6 {
		t.Errorf("Resolve(01): %v", err)
	}
	if x, err := st.Resolve(ctx, "01e"); err != nil || x.ID != e {
		t.Errorf("Resolve(01e) = %v, %v", x, err)
	}
	if _, err := st.Resolve(ctx, "01Z"); !errors.Is(err, agentuse.ErrNotFound) {
		t.Errorf("Resolve(01Z): %v", err)
	}
	// A missing store has no sessions.
	none, _ := agentuse.OpenStore(ctx, agentuse.StoreOptions{Dir: filepath.Join(root, "nope")})
	if xs, err := collectSessions(ctx, none); err != nil || len(xs) != 0 {
		t.Errorf("missing store: %v, %v", xs, err)
	}
}

// TestAgentUseStopSessionTree stops a running parent whose child waits at
// a gate: both get USER_STOPPED, the child's pending tool becomes an error
// keeping its resume payload, a finished sibling is left alone.
func TestAgentUseStopSessionTree(t *testing.T) {
	t.Parallel()
	s := newAUTestStore(t, agentuse.StoreOptions{})
	ctx := context.Background()
	parent := mustCreate(t, s.Store, auSpec)
	pmsg := mustMessage(t, parent)
	s.set(2000)
	call, err := parent.AddPart(pmsg, agentuse.ToolPart("toolu_1", "subagent__reviewer", json.RawMessage(`{"task":"t"}`), parent.Now()))
	if err != nil {
		t.Fatal(err)
	}
	child, err := parent.CreateSubagent(ctx, auSpec)
	if err != nil {
		t.Fatal(err)
	}
	cmsg := mustMessage(t, child)
	s.set(2100)
	gate, err := child.AddPart(cmsg, agentuse.ToolPart("toolu_2", "await_human", json.RawMessage(`{"prompt":"ok?"}`), child.Now()))
	if err != nil {
		t.Fatal(err)
	}
	s.set(2200)
	if err := child.SuspendTool(cmsg, gate, json.RawMessage(`{"kind":"await_human","prompt":"ok?"}`)); err != nil {
		t.Fatal(err)
	}
	if err := child.SetStatus(agentuse.StatusSuspended); err != nil {
		t.Fatal(err)
	}
	done, err := parent.CreateSubagent(ctx, auSpec)
	if err != nil {
		t.Fatal(err)
	}
	if err := done.SetStatus(agentuse.StatusCompleted); err != nil {
		t.Fatal(err)
	}
	for _, w := range []*agentuse.Session{parent, child, done} {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	s.set(3000)
	res, err := s.StopSessionTree(ctx, parent.ID()[:20], agentuse.StopOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []agentuse.Stopped{
		{SessionID: parent.ID(), AgentName: "manager", WasStatus: "running", Stopped: true},
		{SessionID: child.ID(), AgentName: "manager", WasStatus: "suspended", Stopped: true},
		{SessionID: done.ID(), AgentName: "manager", WasStatus: "completed", Stopped: false},
	}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("StopSessionTree (-want +got):\n%s", diff)
	}
	gotGate := readFile(t, filepath.Join(child.Dir(), cmsg, "part", gate+".json"))
	wantState := `"state": {
    "status": "error",
    "input": {
      "prompt": "ok?"
    },
    "error": "Session stopped by user",
    "metadata": {
      "resumePayload": {
        "kind": "await_human",
        "prompt": "ok?"
      }
    },
    "time": {
      "start": 2200,
      "end": 3000
    }
  }`
	if !strings.Contains(gotGate, wantState) {
		t.Errorf("stopped gate:\n%s\nwant state:\n%s", gotGate, wantState)
	}
	gotCall := readFile(t, filepath.Join(parent.Dir(), pmsg, "part", call+".json"))
	if !strings.Contains(gotCall, `"error": "Session stopped by user",
    "time": {
      "start": 2000,
      "end": 3000
    }`) {
		t.Errorf("stopped call:\n%s", gotCall)
	}
	sess := readFile(t, filepath.Join(child.Dir(), "session.json"))
	if !strings.Contains(sess, `"error": {
    "code": "USER_STOPPED",
    "message": "Session stopped by user",
    "time": 3000
  }`) || !strings.Contains(sess, `"status": "error"`) {
		t.Errorf("stopped child session:\n%s", sess)
	}
	if d := readFile(t, filepath.Join(done.Dir(), "session.json")); strings.Contains(d, "USER_STOPPED") {
		t.Errorf("finished sibling was stopped:\n%s", d)
	}
}

// TestAgentUseArtifacts writes both artifact kinds and discards a stream.
func TestAgentUseArtifacts(t *testing.T) {
	t.Parallel()
	s := newAUTestStore(t, agentuse.StoreOptions{})
	w := mustCreate(t, s.Store, auSpec)
	msg := mustMessage(t, w)
	ref, err := w.WriteToolOutput(msg, "tools__bash", "héllo😀")
	if err != nil {
		t.Fatal(err)
	}
	if ref.OriginalChars != 7 || !strings.HasPrefix(ref.Path, filepath.Base(w.Dir())+"/"+msg+"/artifact/tool-output-tools__bash-") {
		t.Errorf("ref %+v", ref)
	}
	if fi, err := os.Stat(ref.AbsolutePath); err != nil || fi.Size() != ref.Bytes || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600) {
		t.Errorf("artifact file: %v, %v", fi, err)
	}
	st, err := w.CreateToolOutputStream(msg, "tools__bash", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Write([]byte("1\n2\n")); err != nil {
		t.Fatal(err)
	}
	ref2, err := st.Finalize()
	if err != nil {
		t.Fatal(err)
	}
	got := readFile(t, ref2.AbsolutePath)
	if !strings.HasPrefix(got, "# AgentUse Tool Output Artifact\nkind: tool-output\ntool: tools__bash\ncreatedAt: ") ||
		!strings.HasSuffix(got, "messageID: "+msg+"\n\n1\n2\n") || ref2.Bytes != int64(len(got)) {
		t.Errorf("stream artifact %+v:\n%s", ref2, got)
	}
	if _, err := st.Write([]byte("x")); err == nil {
		t.Error("Write after Finalize accepted")
	}
	st3, err := w.CreateToolOutputStream(msg, "tools__bash", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st3.Write([]byte("partial")); err != nil {
		t.Fatal(err)
	}
	if err := st3.Discard(); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(filepath.Join(w.Dir(), msg, "artifact"))
	if len(ents) != 2 {
		t.Errorf("artifact dir after discard: %v", ents)
	}
}

// TestAgentUseStoreResolution finds the store as AgentUse does.
func TestAgentUseStoreResolution(t *testing.T) {
	testenv.SkipOnWindows(t, "the expected hashes are of Unix paths (on Windows AgentUse hashes C:\\... paths)")
	ctx := context.Background()
	noGit := func(context.Context, string) (string, error) { return "", errors.New("no repo") }
	cases := []struct {
		name string
		o    agentuse.StoreOptions
		want string
	}{
		{"git top level", agentuse.StoreOptions{DataDir: "/d", StateRoot: "/home/dev/demo-project/packages/app",
			Git: func(context.Context, string) (string, error) { return "/home/dev/demo-project\n", nil }}, "/d/agentuse/project/a451240a36c0c105/session"},
		{"no git", agentuse.StoreOptions{DataDir: "/d", StateRoot: "/home/dev/scratch-agents/", Git: noGit}, "/d/agentuse/project/7fa0b5443ea9e42b/session"},
		{"explicit root", agentuse.StoreOptions{Dir: "/x/session", DataDir: "/d"}, "/x/session"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			st, err := agentuse.OpenStore(ctx, c.o)
			if err != nil {
				t.Fatal(err)
			}
			if st.Dir() != filepath.FromSlash(c.want) {
				t.Errorf("root %s, want %s", st.Dir(), c.want)
			}
		})
	}
	t.Run("XDG_DATA_HOME", func(t *testing.T) {
		t.Setenv("XDG_DATA_HOME", "/xdg")
		st, err := agentuse.OpenStore(ctx, agentuse.StoreOptions{StateRoot: "/home/dev/e2e-project", Git: noGit})
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.FromSlash("/xdg/agentuse/project/edb07f2a96b085fe/session"); st.Dir() != want {
			t.Errorf("root %s, want %s", st.Dir(), want)
		}
	})
}

// TestAgentUseDurableModes checks file and directory modes and that no
// temporary file is left behind, with and without fsync.
func TestAgentUseDurableModes(t *testing.T) {
	t.Parallel()
	testenv.SkipOnWindows(t, "no permission bits: the user profile's ACLs protect the files")
	for _, sync := range []agentuse.SyncPolicy{agentuse.SyncEach, agentuse.SyncNone} {
		s := newAUTestStore(t, agentuse.StoreOptions{Sync: sync})
		w := mustCreate(t, s.Store, auSpec)
		msg := mustMessage(t, w)
		p := mustPart(t, w, msg)
		if err := w.UpdatePart(msg, p, agentuse.Field{Key: "text", Value: "y"}); err != nil {
			t.Fatal(err)
		}
		if err := w.WriteTools(json.RawMessage(`{"tools":[]}`)); err != nil {
			t.Fatal(err)
		}
		err := filepath.WalkDir(s.root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, _ := d.Info()
			want := fs.FileMode(0o600)
			if d.IsDir() {
				want = 0o700
			}
			if fi.Mode().Perm() != want {
				t.Errorf("sync=%v: %s mode %v, want %v", sync, path, fi.Mode().Perm(), want)
			}
			if vfs.IsTempName(path) {
				t.Errorf("sync=%v: temporary file left: %s", sync, path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
