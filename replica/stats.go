package replica

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/sessctl/sessctl/layout/vfs"
)

// statsEvery is how often a Replicator writes its statistics.
const statsEvery = 10 * time.Second

// statsKeep is how long the statistics of a replicator that stopped
// updating them are kept.
const statsKeep = 7 * 24 * time.Hour

// ReplicatorStats is what a Replicator reports of itself, in a file in
// Options.StateDir (see Remote.Replicators): who runs it, since when, and
// what it sent to the remote.
type ReplicatorStats struct {
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	// Updated is when the file was last written; Closed is true once the
	// replicator was closed.
	Updated time.Time `json:"updated"`
	Closed  bool      `json:"closed"`
	// Sessions counts the sessions it shipped, Shipments the manifest
	// generations it published.
	Sessions  int   `json:"sessions"`
	Shipments int64 `json:"shipments"`
	// Requests counts its requests by kind; Uploaded and Downloaded are
	// the object bytes it moved.
	Requests   RequestCountsJSON `json:"requests"`
	Uploaded   int64             `json:"uploaded"`
	Downloaded int64             `json:"downloaded"`
	// LastError is the last error a shipment met ("" after a success).
	LastError string `json:"lastError,omitempty"`
}

// RequestCountsJSON is the JSON shape of RequestCounts.
type RequestCountsJSON struct {
	Get    int64 `json:"get"`
	Put    int64 `json:"put"`
	List   int64 `json:"list"`
	Delete int64 `json:"delete"`
}

// JSON returns the counts in their JSON shape.
func (c RequestCounts) JSON() RequestCountsJSON {
	return RequestCountsJSON(c)
}

// statsPrefix starts the names of the statistics files of the
// replicators of this store and remote.
func (r *Remote) statsPrefix() string {
	if r.state == "" {
		return ""
	}
	base := strings.TrimSuffix(filepath.Base(r.state), ".json")
	return filepath.Join(filepath.Dir(r.state), "replicator-"+strings.TrimPrefix(base, "sync-")+"-")
}

// saveStats writes the replicator's statistics, when the Remote keeps
// state.
func (x *Replicator) saveStats() {
	pre := x.r.statsPrefix()
	if pre == "" {
		return
	}
	x.mu.Lock()
	st := ReplicatorStats{Host: x.r.opts.Host, PID: os.Getpid(), Started: x.started.UTC(), Updated: time.Now().UTC(), Closed: x.stopped,
		Sessions: len(x.shipped1), Shipments: x.ships.Load()}
	if x.lastErr != nil {
		st.LastError = x.lastErr.Error()
	}
	x.mu.Unlock()
	st.Requests = x.r.b.st.counts().sub(x.req0).JSON()
	st.Uploaded = x.r.b.st.uploaded.Load() - x.up0
	st.Downloaded = x.r.b.st.downloaded.Load() - x.down0
	data, err := json.Marshal(st)
	if err != nil {
		return
	}
	fsys := x.r.opts.fs()
	path := fmt.Sprintf("%s%d.json", pre, st.PID)
	if err := vfs.MkdirAllSync(fsys, filepath.Dir(path), vfs.DirMode); err != nil {
		return
	}
	_ = vfs.WriteFileAtomicNoSync(fsys, path, data, vfs.FileMode)
}

// Replicators returns what the replicators of this store and remote on
// this machine reported of themselves (with Options.StateDir set), the
// most recently updated first. Files of replicators that stopped
// updating them a week ago are removed.
func (r *Remote) Replicators() ([]ReplicatorStats, error) {
	pre := r.statsPrefix()
	if pre == "" {
		return nil, nil
	}
	fsys := r.opts.fs()
	ents, err := fsys.ReadDir(filepath.Dir(pre))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read replicator statistics: %w", err)
	}
	var out []ReplicatorStats
	for _, e := range ents {
		path := filepath.Join(filepath.Dir(pre), e.Name())
		if !strings.HasPrefix(path, pre) || !strings.HasSuffix(path, ".json") || !e.Type().IsRegular() {
			continue
		}
		data, err := fsys.ReadFile(path)
		if err != nil {
			continue
		}
		var st ReplicatorStats
		if json.Unmarshal(data, &st) != nil {
			continue
		}
		if time.Since(st.Updated) > statsKeep {
			_ = fsys.Remove(path)
			continue
		}
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Updated.After(out[j].Updated) })
	return out, nil
}
