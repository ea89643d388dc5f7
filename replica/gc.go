package replica

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/sessctl/sessctl/engine"
)

// A deleted session leaves a tombstone, t/<kind>/<name>: every machine's
// next pull sees that the session was deleted instead of bringing it back,
// and no push uploads it again. The reasons a tombstone gives.
const (
	// ReasonDelete: deleted on purpose (Remote.Delete); a pull moves the
	// local copy to the trash when it holds nothing the remote lacked.
	ReasonDelete = "delete"
	// ReasonPrune: older than the retention (Remote.Prune); local copies
	// are left alone, only the remote forgets it.
	ReasonPrune = "prune"
)

// tombstoneRec is the content of a tombstone.
type tombstoneRec struct {
	Format string `json:"format"`
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Time   string `json:"time"`
	Host   string `json:"host,omitempty"`
	Reason string `json:"reason"`
	// Gen is the newest generation the session had when it was deleted.
	Gen int64 `json:"gen,omitempty"`
}

func tombstoneKey(kind, name string) string { return "t/" + kind + "/" + name }

// tombstone reads the tombstone of a session: nil when it has none.
func (b *bucket) tombstone(ctx context.Context, kind, name string) (*tombstoneRec, error) {
	key := tombstoneKey(kind, name)
	stored, _, err := b.get(ctx, key, maxSmall)
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	plain, err := b.open(key, stored)
	if err != nil {
		return nil, err
	}
	var t tombstoneRec
	if json.Unmarshal(plain, &t) != nil || t.Format != FormatVersion || t.Kind != kind || t.Name != name {
		// Unreadable, but there: the session counts as deleted.
		return &tombstoneRec{Format: FormatVersion, Kind: kind, Name: name, Reason: ReasonPrune}, nil
	}
	return &t, nil
}

// listKeys lists the keys below prefix that parse as kind/name (for
// tombstones and leases), by session id, with their listing info.
func (b *bucket) listKeys(ctx context.Context, prefix string) (map[string]ObjectInfo, []Warning, error) {
	out := map[string]ObjectInfo{}
	var warns []Warning
	var n int64
	defer func() { b.st.lists.Add(n/1000 + 1) }()
	for obj, err := range b.c.List(ctx, prefix) {
		if err != nil {
			return nil, nil, err
		}
		n++
		kind, name, ok := strings.Cut(strings.TrimPrefix(obj.Key, prefix), "/")
		if !ok || !validName(kind, name) {
			warns = append(warns, Warning{Key: b.objectName(obj.Key), Err: errors.New("not an object of this layout; ignored")})
			continue
		}
		out[kind+"/"+name] = obj
	}
	return out, warns, nil
}

// validName reports whether name is a session name of kind.
func validName(kind, name string) bool {
	switch kind {
	case KindPi:
		return validPiName(name)
	case KindAgentUse:
		return validAgentUseName(name)
	}
	return false
}

// bury writes a session's tombstone (create-only: an existing one
// stands) and deletes its manifests and lease. Its data objects are left
// to a collection (Prune): a reader may be reading them.
func (r *Remote) bury(ctx context.Context, kind, name string, h *head, reason string) error {
	t := tombstoneRec{Format: FormatVersion, Kind: kind, Name: name, Time: r.opts.now().UTC().Format(time.RFC3339), Host: r.opts.Host, Reason: reason}
	if h != nil {
		t.Gen = h.gen
	}
	data, _ := json.Marshal(t)
	stored, err := r.b.seal(data)
	if err != nil {
		return err
	}
	if err := r.b.put(ctx, tombstoneKey(kind, name), stored, true); err != nil && !errors.Is(err, errRace) {
		return err
	}
	if h != nil {
		for _, k := range append([]string{h.key}, h.older...) {
			if err := r.b.remove(ctx, k); err != nil {
				return err
			}
		}
	}
	return r.b.remove(ctx, leaseKey(kind, name))
}

// Delete deletes sessions from the remote, each named as in a report
// ("kind/name"), by its name (a pi session's file name, an AgentUse
// session's "<project hash>/<directory>"), or by its session id or a
// unique prefix of it: each gets a tombstone, so that no machine's pull
// brings it back and no push uploads it again, and its manifests go; its
// data objects are removed by the next Prune once no manifest names them.
// Each machine's next pull moves its local copy of a pi session to the
// store's trash when that copy holds nothing the remote lacked (else it
// is kept and reported); this Delete does so on this machine at once. A
// name no remote session has is an error wrapping engine.ErrNotFound
// (nothing is deleted), one several have engine.ErrAmbiguous.
func (r *Remote) Delete(ctx context.Context, sessions []string) (*Report, error) {
	if err := r.lockRun(ctx); err != nil {
		return nil, err
	}
	defer r.unlockRun()
	req0 := r.b.st.counts()
	rep := &Report{}
	heads, warns, err := r.b.list(ctx)
	if err != nil {
		return nil, err
	}
	rep.Warnings = append(rep.Warnings, warns...)
	var ids []string
	for _, arg := range sessions {
		id, err := resolveRemote(heads, arg)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	locals, _, _, err := r.scanLocal(ctx)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		kind, name, _ := strings.Cut(id, "/")
		sr := SessionReport{Kind: kind, Name: name, State: "deleted"}
		if err := r.bury(ctx, kind, name, heads[id], ReasonDelete); err != nil {
			sr.State, sr.Err = "failed", err
		} else if loc := locals[id]; loc != nil {
			sr.Path = loc.path
			if err := r.trashLocal(ctx, kind, loc.path); err != nil {
				rep.Warnings = append(rep.Warnings, Warning{Key: loc.path, Err: err})
			}
		}
		rep.Sessions = append(rep.Sessions, sr)
	}
	rep.RequestKinds = r.b.st.counts().sub(req0)
	rep.Requests = rep.RequestKinds.Total()
	return rep, nil
}

// resolveRemote finds the session arg names among the remote's.
func resolveRemote(heads map[string]*head, arg string) (string, error) {
	if _, ok := heads[arg]; ok {
		return arg, nil
	}
	var match []string
	for id, h := range heads {
		if h.name == arg {
			return id, nil
		}
		sid, ok := nameID(h.name)
		if h.kind == KindAgentUse {
			_, sid, ok = strings.Cut(h.name, "/")
		}
		if ok && strings.HasPrefix(sid, arg) && arg != "" {
			if sid == arg {
				return id, nil
			}
			match = append(match, id)
		}
	}
	switch len(match) {
	case 0:
		return "", fmt.Errorf("remote session %q: %w", arg, engine.ErrNotFound)
	case 1:
		return match[0], nil
	}
	sort.Strings(match)
	return "", fmt.Errorf("remote session %q: %d sessions match (%s): %w", arg, len(match), strings.Join(match, ", "), engine.ErrAmbiguous)
}

// trashLocal moves a pi session file to its store's trash. AgentUse
// session directories are left alone (AgentUse deletes its own).
func (r *Remote) trashLocal(ctx context.Context, kind, path string) error {
	if kind != KindPi {
		return errors.New("deleted on the remote; AgentUse session directories are not moved to the trash by sync: the local copy is kept")
	}
	root := firstRoot(r.opts.jsonlRoots(), "")
	for _, d := range r.opts.jsonlRoots() {
		if rel, err := filepath.Rel(d, path); err == nil && filepath.IsLocal(rel) {
			root = d
			break
		}
	}
	st, err := engine.OpenStore(ctx, engine.StoreOptions{Dir: root, FS: r.opts.FS, Command: "sessctl sync"})
	if err != nil {
		return err
	}
	_, err = st.Trash(ctx, path, engine.TrashOptions{})
	return err
}

// PruneOptions configure Remote.Prune.
type PruneOptions struct {
	// OlderThan, when positive, deletes (with a tombstone, as Delete,
	// but leaving local copies alone) the sessions whose newest manifest
	// was written longer ago than this.
	OlderThan time.Duration
	// Grace spares the objects written less than Grace ago, and the
	// superseded manifests: a push may be writing them, a reader may be
	// reading them. 0 means 1 hour.
	Grace time.Duration
	// DryRun reports what would be deleted and deletes nothing.
	DryRun bool
}

// Prune applies retention and collects garbage: with OlderThan it deletes
// the sessions not written for that long (each gets a tombstone, see
// Delete; local copies stay), and then removes the objects no manifest
// names: data objects left by compaction or by interrupted pushes,
// superseded manifest generations, the manifests and leases of deleted
// sessions. An object written less than Grace ago, or that a manifest
// lists as retired, is kept. It reads every session's newest manifest
// (a GET each); one it cannot read (an encrypted remote without the
// identity, a torn manifest) stops the collection before anything is
// deleted. Nothing else removes anything from a remote: push and pull
// never do.
func (r *Remote) Prune(ctx context.Context, o PruneOptions) (*Report, error) {
	if err := r.lockRun(ctx); err != nil {
		return nil, err
	}
	defer r.unlockRun()
	if o.Grace <= 0 {
		o.Grace = time.Hour
	}
	req0, down0 := r.b.st.counts(), r.b.st.downloaded.Load()
	rep := &Report{}
	now := r.opts.now()
	heads, warns, err := r.b.list(ctx)
	if err != nil {
		return nil, err
	}
	rep.Warnings = append(rep.Warnings, warns...)
	tombs, warns, err := r.b.listKeys(ctx, "t/")
	if err != nil {
		return nil, err
	}
	rep.Warnings = append(rep.Warnings, warns...)

	// Retention.
	if o.OlderThan > 0 {
		for _, h := range sortedHeads(heads) {
			id := h.kind + "/" + h.name
			if _, dead := tombs[id]; dead {
				continue
			}
			mt := h.mtimes[h.key]
			if mt.IsZero() || now.Sub(mt) < o.OlderThan {
				continue
			}
			sr := SessionReport{Kind: h.kind, Name: h.name, State: "deleted"}
			if !o.DryRun {
				if err := r.bury(ctx, h.kind, h.name, h, ReasonPrune); err != nil {
					sr.State, sr.Err = "failed", err
				} else {
					tombs[id] = ObjectInfo{}
					delete(heads, id)
				}
			}
			rep.Sessions = append(rep.Sessions, sr)
		}
	}

	// Mark: what the manifests name.
	marked := map[string]bool{}
	var drop []string // manifests and leases to delete
	for id, h := range heads {
		if _, dead := tombs[id]; dead {
			drop = append(drop, append([]string{h.key}, h.older...)...)
			continue
		}
		m, err := r.b.getManifest(ctx, h)
		if err != nil {
			return nil, fmt.Errorf("prune %s: %s: nothing was collected: %w", r.opts.Remote, r.b.objectName(h.key), err)
		}
		markManifest(m, marked, now, o.Grace)
		for _, k := range h.older {
			if mt := h.mtimes[k]; !mt.IsZero() && now.Sub(mt) >= o.Grace {
				drop = append(drop, k)
				continue
			}
			_, _, gen, _ := parseManifestKey(strings.TrimPrefix(k, "m/"))
			if om, err := r.b.getManifest(ctx, &head{kind: h.kind, name: h.name, gen: gen, key: k}); err == nil {
				markManifest(om, marked, now, o.Grace)
			}
		}
	}
	leases, _, err := r.b.listKeys(ctx, "l/")
	if err != nil {
		return nil, err
	}
	for id := range leases {
		if _, dead := tombs[id]; dead {
			kind, name, _ := strings.Cut(id, "/")
			drop = append(drop, leaseKey(kind, name))
		}
	}
	// Sweep.
	var garbage []ObjectInfo
	var n int64
	for obj, err := range r.b.c.List(ctx, "d/") {
		if err != nil {
			r.b.st.lists.Add(n/1000 + 1)
			return nil, err
		}
		n++
		if !validObject(obj.Key) || marked[obj.Key] || obj.ModTime.IsZero() || now.Sub(obj.ModTime) < o.Grace {
			continue
		}
		garbage = append(garbage, obj)
	}
	r.b.st.lists.Add(n/1000 + 1)
	sort.Strings(drop)
	for _, k := range drop {
		rep.Collected = append(rep.Collected, k)
		if !o.DryRun {
			if err := r.b.remove(ctx, k); err != nil {
				return nil, err
			}
		}
	}
	for _, obj := range garbage {
		rep.Collected = append(rep.Collected, obj.Key)
		rep.CollectedBytes += obj.Size
		if !o.DryRun {
			if err := r.b.remove(ctx, obj.Key); err != nil {
				return nil, err
			}
		}
	}
	rep.RequestKinds = r.b.st.counts().sub(req0)
	rep.Requests = rep.RequestKinds.Total()
	rep.Downloaded = r.b.st.downloaded.Load() - down0
	return rep, nil
}

// markManifest marks the objects m names, and those it lists as retired
// less than grace ago.
func markManifest(m *Manifest, marked map[string]bool, now time.Time, grace time.Duration) {
	for _, s := range m.Segments {
		if !s.inline() {
			marked[s.Object] = true
		}
	}
	for _, f := range m.Files {
		marked[f.Object] = true
	}
	for _, x := range m.Retired {
		if t, err := time.Parse(time.RFC3339, x.Time); err != nil || now.Sub(t) < grace+retireKeep {
			marked[x.Object] = true
		}
	}
}
