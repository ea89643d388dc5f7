package agentuse_test

// The AgentUse conformance test: the reader reconstructs expected.json of
// ../shared/conformance/agentuse (sessions, tree, children order, message
// order, part order, files, list order), the sanitising and hash vectors
// hold, and every corpus session replayed through the writer API, with
// the corpus's ids and clock, gives byte-identical files.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine/agentuse"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/internal/testenv"
	"github.com/sessctl/sessctl/layout"
)

type auExpected struct {
	Corpora map[string]struct {
		Projects []struct {
			Label                string           `json:"label"`
			StateRoot            string           `json:"stateRoot"`
			HashInput            string           `json:"hashInput"`
			HashInputKind        string           `json:"hashInputKind"`
			ProjectDir           string           `json:"projectDir"`
			SessionRoot          string           `json:"sessionRoot"`
			SessionsWalkOrder    []string         `json:"sessionsWalkOrder"`
			CLIListOrderTopLevel []string         `json:"cliListOrderTopLevel"`
			Sessions             []map[string]any `json:"sessions"`
		} `json:"projects"`
	} `json:"corpora"`
	Vectors struct {
		SanitizeAgentName []struct{ Input, Output string } `json:"sanitizeAgentName"`
		ProjectHash       []struct {
			Input string `json:"input"`
			Hash  string `json:"sha256_16"`
		} `json:"projectHash"`
	} `json:"vectors"`
}

func loadAUExpected(t *testing.T) (string, *auExpected) {
	t.Helper()
	dir := testenv.Corpus(t, "agentuse")
	raw, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp auExpected
	if err := json.Unmarshal(raw, &exp); err != nil {
		t.Fatal(err)
	}
	if len(exp.Corpora) == 0 {
		t.Fatal("expected.json lists no corpora")
	}
	return dir, &exp
}

func TestAgentUseConformanceVectors(t *testing.T) {
	t.Parallel()
	_, exp := loadAUExpected(t)
	if len(exp.Vectors.SanitizeAgentName) == 0 || len(exp.Vectors.ProjectHash) == 0 {
		t.Fatal("no vectors in expected.json")
	}
	for _, v := range exp.Vectors.SanitizeAgentName {
		if got := layout.SanitizeAgentName(v.Input); got != v.Output {
			t.Errorf("SanitizeAgentName(%q) = %q, want %q", v.Input, got, v.Output)
		}
	}
	for _, v := range exp.Vectors.ProjectHash {
		if got := layout.AgentUseProjectHash(v.Input); got != v.Hash {
			t.Errorf("AgentUseProjectHash(%q) = %q, want %q", v.Input, got, v.Hash)
		}
	}
}

// TestAgentUseConformanceReader compares what the reader finds with
// expected.json, produced by AgentUse's own reader API.
func TestAgentUseConformanceReader(t *testing.T) {
	t.Parallel()
	dir, exp := loadAUExpected(t)
	ctx := context.Background()
	for name, corpus := range exp.Corpora {
		xdg := filepath.Join(dir, name, "xdg-data")
		for _, p := range corpus.Projects {
			t.Run(name+"/"+p.Label, func(t *testing.T) {
				t.Parallel()
				if runtime.GOOS == "windows" && !strings.HasPrefix(p.HashInputKind, "git") {
					// AgentUse hashes the absolute state root, which on
					// Windows is a drive path: the recording's folder
					// name is that of its Unix path.
					t.Skipf("the project folder of %s is the hash of a Unix path (recorded on Linux)", p.StateRoot)
				}
				// The store is found from the state root as AgentUse finds it.
				git := func(context.Context, string) (string, error) {
					if strings.HasPrefix(p.HashInputKind, "git") {
						return p.HashInput + "\n", nil
					}
					return "", errors.New("not a git repository")
				}
				st, err := agentuse.OpenStore(ctx, agentuse.StoreOptions{DataDir: xdg, StateRoot: p.StateRoot, Git: git})
				if err != nil {
					t.Fatal(err)
				}
				wantRoot, _ := filepath.Abs(filepath.Join(xdg, filepath.FromSlash(p.SessionRoot)))
				if st.Dir() != wantRoot {
					t.Fatalf("store root %s, want %s", st.Dir(), wantRoot)
				}

				top, err := st.List(ctx, agentuse.ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(p.CLIListOrderTopLevel, auSessionIDs(top)); diff != "" {
					t.Errorf("top-level list order (-want +got):\n%s", diff)
				}
				all, err := collectSessions(ctx, st)
				if err != nil {
					t.Fatal(err)
				}
				wantIDs := append([]string(nil), p.SessionsWalkOrder...)
				gotIDs := auSessionIDs(all)
				sort.Strings(wantIDs)
				sort.Strings(gotIDs)
				if diff := cmp.Diff(wantIDs, gotIDs); diff != "" {
					t.Errorf("discovered sessions (-want +got):\n%s", diff)
				}
				byID := map[string]*agentuse.Info{}
				for _, x := range all {
					byID[x.ID] = x
				}
				for _, want := range p.Sessions {
					id, _ := want["id"].(string)
					x := byID[id]
					if x == nil {
						t.Errorf("session %s not found", id)
						continue
					}
					got := auSessionState(t, st, x, xdg)
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("session %s (-want +got):\n%s", id, diff)
					}
					found, err := st.Resolve(ctx, strings.ToLower(id[:20]))
					if err != nil || found.ID != id {
						t.Errorf("Resolve(%s) = %v, %v", strings.ToLower(id[:20]), found, err)
					}
				}
			})
		}
	}
}

func auSessionIDs(xs []*agentuse.Info) []string {
	out := []string{}
	for _, x := range xs {
		out = append(out, x.ID)
	}
	return out
}

// auSessionState renders a session in expected.json's shape.
func auSessionState(t *testing.T, st *agentuse.Store, x *agentuse.Info, xdg string) map[string]any {
	t.Helper()
	c, err := st.Read(context.Background(), x)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Problems) > 0 {
		t.Errorf("session %s: problems %v", x.ID, c.Problems)
	}
	absXDG, _ := filepath.Abs(xdg)
	rel, _ := filepath.Rel(absXDG, x.Dir)
	var parent, code any
	if x.ParentID != "" {
		parent = x.ParentID
	}
	if x.ErrorCode != "" {
		code = x.ErrorCode
	}
	children := []any{}
	for _, ch := range x.Children {
		children = append(children, ch.ID)
	}
	files := []any{}
	for _, f := range c.Files {
		files = append(files, f)
	}
	msgs := []any{}
	for _, m := range c.Messages {
		parts := []any{}
		ids := []string{}
		for _, p := range m.Parts {
			e := map[string]any{"id": p.ID, "type": p.Type, "sortKey": nil}
			if p.HasSortKey() {
				e["sortKey"] = p.SortKey
			}
			if p.Type == "tool" {
				e["tool"], e["callID"], e["status"] = p.Tool, p.CallID, p.Status
			}
			if p.Role != "" {
				e["role"] = p.Role
			}
			parts = append(parts, e)
			ids = append(ids, p.ID)
		}
		sort.Strings(ids)
		idsAny := []any{}
		for _, id := range ids {
			idsAny = append(idsAny, id)
		}
		tk := m.Tokens
		msgs = append(msgs, map[string]any{
			"id":        m.ID,
			"completed": m.HasCompleted,
			"tokens": map[string]any{
				"input": float64(tk.Input), "output": float64(tk.Output), "reasoning": float64(tk.Reasoning),
				"cache": map[string]any{"read": float64(tk.CacheRead), "write": float64(tk.CacheWrite)},
			},
			"parts":            parts,
			"partIdsUlidOrder": idsAny,
		})
	}
	return map[string]any{
		"id":                 x.ID,
		"created":            float64(x.Created),
		"dir":                filepath.ToSlash(rel),
		"dirAgentSuffix":     x.AgentDir,
		"agentIdField":       x.AgentID,
		"agentName":          x.AgentName,
		"isSubAgent":         x.IsSubAgent,
		"parentSessionID":    parent,
		"status":             x.Status,
		"trigger":            x.Trigger,
		"errorCode":          code,
		"children":           children,
		"hasToolsSnapshot":   c.Tools != nil,
		"hasContextSnapshot": c.Context != nil,
		"files":              files,
		"messages":           msgs,
	}
}

// auReplay drives the writer with the corpus's ids and clock.
type auReplay struct {
	t     *testing.T
	now   int64
	ids   []string
	store *agentuse.Store
}

func newAUReplay(t *testing.T, root string, sync agentuse.SyncPolicy) *auReplay {
	r := &auReplay{t: t}
	st, err := agentuse.OpenStore(context.Background(), agentuse.StoreOptions{
		Dir:  root,
		Sync: sync,
		Now:  func() time.Time { return time.UnixMilli(r.now) },
		NewID: func() string {
			if len(r.ids) == 0 {
				t.Fatal("replay: no id queued")
			}
			id := r.ids[0]
			r.ids = r.ids[1:]
			return id
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	r.store = st
	return r
}

// auMembers returns the auMembers of a JSON object in file order.
func auMembers(t *testing.T, raw []byte) ([]string, map[string]json.RawMessage) {
	t.Helper()
	var keys []string
	vals := map[string]json.RawMessage{}
	err := jsonl.Members(raw, func(m *jsonl.Member) bool {
		k := m.KeyString()
		keys = append(keys, k)
		vals[k] = append(json.RawMessage(nil), m.Value...)
		return true
	})
	if err != nil {
		t.Fatalf("members: %v", err)
	}
	return keys, vals
}

func auStr(v json.RawMessage) string {
	s, _ := jsonl.String(v)
	return s
}

func auNum(v json.RawMessage) int64 {
	f, _ := jsonl.Number(v)
	return int64(f)
}

func auIndexOf(keys []string, k string) int {
	for i, x := range keys {
		if x == k {
			return i
		}
	}
	return -1
}

// auAfter returns the fields auAfter key k, in order.
func auAfter(keys []string, vals map[string]json.RawMessage, k string) []agentuse.Field {
	var out []agentuse.Field
	i := auIndexOf(keys, k)
	if i < 0 {
		return nil
	}
	for _, key := range keys[i+1:] {
		out = append(out, agentuse.Field{Key: key, Value: vals[key]})
	}
	return out
}

// session replays the session x (read from src) and its children.
func (r *auReplay) session(src *agentuse.Store, x *agentuse.Info, parent *agentuse.Session) {
	t := r.t
	t.Helper()
	keys, v := auMembers(t, x.Raw)
	_, agent := auMembers(t, v["agent"])
	_, tm := auMembers(t, v["time"])
	spec := agentuse.SessionSpec{
		Agent: agentuse.Agent{
			ID: auStr(agent["id"]), Name: auStr(agent["name"]), Description: auStr(agent["description"]),
			FilePath: auStr(agent["filePath"]), IsSubAgent: string(agent["isSubAgent"]) == "true",
		},
		Model:   auStr(v["model"]),
		Version: auStr(v["version"]),
		Mock:    string(v["mock"]) == "true",
		Config:  v["config"],
	}
	_, proj := auMembers(t, v["project"])
	spec.Project = agentuse.Project{Root: auStr(proj["root"]), Cwd: auStr(proj["cwd"])}
	if keys[0] == "id" {
		spec.ID = x.ID
	}
	if i := auIndexOf(keys, "trigger"); i >= 0 && i < auIndexOf(keys, "agent") {
		spec.Trigger = auStr(v["trigger"])
	}
	r.now = auNum(tm["created"])
	r.ids = []string{x.ID}
	var w *agentuse.Session
	var err error
	if parent == nil {
		w, err = r.store.Create(context.Background(), spec)
	} else {
		w, err = parent.CreateSubagent(context.Background(), spec)
	}
	if err != nil {
		t.Fatalf("create %s: %v", x.ID, err)
	}
	defer func() {
		if err := w.Close(); err != nil {
			t.Error(err)
		}
	}()
	trailing := auAfter(keys, v, "time")
	updated := auNum(tm["updated"])
	if auStr(v["status"]) != agentuse.StatusRunning || updated != r.now || len(trailing) > 0 {
		r.now = updated
		fields := append([]agentuse.Field{{Key: "status", Value: v["status"]}}, trailing...)
		if err := w.UpdateSession(fields...); err != nil {
			t.Fatal(err)
		}
	}

	c, err := src.Read(context.Background(), x)
	if err != nil {
		t.Fatal(err)
	}
	if c.Tools != nil {
		if err := w.WriteTools(json.RawMessage(c.Tools)); err != nil {
			t.Fatal(err)
		}
	}
	if c.Context != nil {
		if err := w.WriteContext(json.RawMessage(c.Context)); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range c.Messages {
		r.message(w, m)
	}
	for _, ch := range x.Children {
		r.session(src, ch, w)
	}
}

func (r *auReplay) message(w *agentuse.Session, m *agentuse.Message) {
	t := r.t
	t.Helper()
	_, v := auMembers(t, m.Raw)
	_, tm := auMembers(t, v["time"])
	_, user := auMembers(t, v["user"])
	_, prompt := auMembers(t, user["prompt"])
	akeys, asst := auMembers(t, v["assistant"])
	_, path := auMembers(t, asst["path"])
	var system []string
	if err := json.Unmarshal(asst["system"], &system); err != nil {
		t.Fatal(err)
	}
	cost, _ := jsonl.Number(asst["cost"])
	r.now = auNum(tm["created"])
	r.ids = []string{m.ID}
	id, err := w.AddMessage(agentuse.MessageSpec{
		Task: auStr(prompt["task"]), User: auStr(prompt["user"]), System: system,
		ModelID: auStr(asst["modelID"]), ProviderID: auStr(asst["providerID"]), Mode: auStr(asst["mode"]),
		Cwd: auStr(path["cwd"]), Root: auStr(path["root"]), Cost: cost,
	})
	if err != nil || id != m.ID {
		t.Fatalf("add message %s: %s, %v", m.ID, id, err)
	}
	var u agentuse.MessageUpdate
	if c, ok := tm["completed"]; ok {
		u.Time = []agentuse.Field{{Key: "completed", Value: c}}
	}
	tkeys, tok := auMembers(t, asst["tokens"])
	for _, k := range tkeys {
		if k == "cache" {
			ckeys, cache := auMembers(t, tok["cache"])
			for _, ck := range ckeys {
				u.Cache = append(u.Cache, agentuse.Field{Key: ck, Value: cache[ck]})
			}
			continue
		}
		u.Tokens = append(u.Tokens, agentuse.Field{Key: k, Value: tok[k]})
	}
	u.Assistant = auAfter(akeys, asst, "tokens")
	if err := w.UpdateMessage(m.ID, u); err != nil {
		t.Fatal(err)
	}
	for _, p := range m.Parts {
		keys, pv := auMembers(t, p.Raw)
		if keys[0] != "type" {
			t.Errorf("%s: first key %q, not type", p.Path, keys[0])
			continue
		}
		var fields []agentuse.Field
		for _, k := range keys[1:] {
			if k == "id" {
				break
			}
			fields = append(fields, agentuse.Field{Key: k, Value: pv[k]})
		}
		r.ids = []string{p.ID}
		pid, err := w.AddPart(m.ID, agentuse.Part{Type: auStr(pv["type"]), Fields: fields})
		if err != nil || pid != p.ID {
			t.Fatalf("add part %s: %s, %v", p.ID, pid, err)
		}
		if rest := auAfter(keys, pv, "messageID"); len(rest) > 0 {
			if err := w.UpdatePart(m.ID, p.ID, rest...); err != nil {
				t.Fatal(err)
			}
		}
	}
	r.artifacts(w, m)
}

func (r *auReplay) artifacts(w *agentuse.Session, m *agentuse.Message) {
	t := r.t
	t.Helper()
	dir := filepath.Join(m.Dir, layout.AgentUseArtifactDir)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		base := strings.TrimSuffix(strings.TrimSuffix(e.Name(), ".json"), ".txt")
		r.ids = []string{base[len(base)-26:]}
		switch filepath.Ext(e.Name()) {
		case ".json":
			_, v := auMembers(t, raw)
			r.now = auNum(v["createdAt"])
			w.SetArtifactAgentID(auStr(v["agentId"]))
			ref, err := w.WriteToolOutput(m.ID, auStr(v["toolName"]), v["output"])
			if err != nil {
				t.Fatal(err)
			}
			if ref.Bytes != int64(len(raw)) || filepath.Base(ref.Path) != e.Name() {
				t.Errorf("artifact ref %+v for %s (%d bytes)", ref, e.Name(), len(raw))
			}
		case ".txt":
			head, body, ok := strings.Cut(string(raw), "\n\n")
			if !ok {
				t.Fatalf("%s: no blank line auAfter the header", e.Name())
			}
			var tool string
			var meta json.RawMessage
			for _, line := range strings.Split(head, "\n") {
				switch {
				case strings.HasPrefix(line, "tool: "):
					tool = strings.TrimPrefix(line, "tool: ")
				case strings.HasPrefix(line, "agentId: "):
					w.SetArtifactAgentID(strings.TrimPrefix(line, "agentId: "))
				case strings.HasPrefix(line, "createdAt: "):
					ts, err := time.Parse(time.RFC3339Nano, strings.TrimPrefix(line, "createdAt: "))
					if err != nil {
						t.Fatal(err)
					}
					r.now = ts.UnixMilli()
				}
			}
			if i := strings.Index(head, "\nmetadata: "); i >= 0 {
				meta = json.RawMessage(head[i+len("\nmetadata: "):])
			}
			var metaAny any
			if meta != nil {
				metaAny = meta
			}
			st, err := w.CreateToolOutputStream(m.ID, tool, metaAny)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.Write([]byte(body)); err != nil {
				t.Fatal(err)
			}
			ref, err := st.Finalize()
			if err != nil {
				t.Fatal(err)
			}
			if ref.Bytes != int64(len(raw)) {
				t.Errorf("artifact ref %+v for %s (%d bytes)", ref, e.Name(), len(raw))
			}
		}
	}
}

// TestAgentUseRoundTrip replays every corpus session through the writer
// and compares every file byte for byte.
func TestAgentUseRoundTrip(t *testing.T) {
	t.Parallel()
	dir, exp := loadAUExpected(t)
	ctx := context.Background()
	for name, corpus := range exp.Corpora {
		xdg := filepath.Join(dir, name, "xdg-data")
		for _, p := range corpus.Projects {
			src, err := agentuse.OpenStore(ctx, agentuse.StoreOptions{Dir: filepath.Join(xdg, filepath.FromSlash(p.SessionRoot))})
			if err != nil {
				t.Fatal(err)
			}
			top, err := src.List(ctx, agentuse.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range top {
				t.Run(name+"/"+p.Label+"/"+filepath.Base(x.Dir), func(t *testing.T) {
					t.Parallel()
					dst := t.TempDir()
					r := newAUReplay(t, dst, agentuse.SyncNone)
					r.session(src, x, nil)
					auCompareTrees(t, x.Dir, filepath.Join(dst, filepath.Base(x.Dir)))
				})
			}
		}
	}
}

// auCompareTrees checks that every file of want exists in got with the same
// bytes and that got holds nothing else but lock files (0600) in 0700
// directories.
func auCompareTrees(t *testing.T, want, got string) {
	t.Helper()
	seen := map[string]bool{}
	n := 0
	err := filepath.WalkDir(want, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(want, p)
		seen[rel] = true
		n++
		wb, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		gb, err := os.ReadFile(filepath.Join(got, rel))
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			return nil
		}
		if !bytes.Equal(wb, gb) {
			t.Errorf("%s differs:\n--- want\n%s\n--- got\n%s", rel, wb, gb)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(got, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o700 {
				t.Errorf("%s: mode %v, want 0700", p, fi.Mode().Perm())
			}
			return nil
		}
		if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", p, fi.Mode().Perm())
		}
		rel, _ := filepath.Rel(got, p)
		if !seen[rel] && filepath.Base(rel) != layout.AgentUseLockFile {
			t.Errorf("unexpected file %s", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Error("no files compared")
	}
}
