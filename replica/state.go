package replica

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/sessctl/sessctl/layout"
	"github.com/sessctl/sessctl/layout/vfs"
)

// sessionState is what the last run knew of one session on both sides.
// It only saves work: without it (a new machine, a lost cache) a run
// compares the session in full and reaches the same result.
type sessionState struct {
	Path  string `json:"path"`            // the local file (pi) or directory (AgentUse)
	Size  int64  `json:"size"`            // its size when last seen
	Mtime int64  `json:"mtime,omitempty"` // its mtime (ns) when last seen

	// P: every line of the local file before P is in the remote. PTail
	// is the sha256 of the (up to 4 KiB of) bytes before P, to see that
	// the file was not rewritten since.
	P     int64  `json:"p"`
	PTail string `json:"ptail,omitempty"`
	// F: the first remote segment that may hold a line of the local file
	// after P (lines a pull appended there).
	F int `json:"f"`
	// Q: the remote segments before Q are in the local file.
	Q int `json:"q"`
	// Known are the ids of remote lines a pull appended after P: the
	// next push need not read their segments to know them.
	Known []string `json:"known,omitempty"`
	// Held are the sync markers before P that no push uploaded (one goes
	// up with the first line that descends from it): P moves past them,
	// so that a writer that never descends from one (pi, whose leaf is
	// in its memory) does not make every push read and upload again what
	// follows it.
	Held []heldMarker `json:"held,omitempty"`

	// Pushed: at Size, the local file held nothing the remote lacks
	// (but held-back sync markers).
	Pushed bool `json:"pushed,omitempty"`

	// Gen, Segs and Last describe the remote manifest last seen: its
	// generation, number of segments and last segment, to check that a
	// newer manifest extends it.
	Gen  int64  `json:"gen"`
	Segs int    `json:"segs"`
	Last string `json:"last,omitempty"`

	// Files maps an AgentUse session's files to the sha256 of the content
	// both sides had at the last sync.
	Files map[string]string `json:"files,omitempty"`

	// Deleted is the reason of the tombstone of a session deleted from
	// the remote whose local copy was kept.
	Deleted string `json:"deleted,omitempty"`

	// Pending is set when a push sent a manifest and saw no reply: the
	// manifest may be on the remote all the same (see settle).
	Pending *pendingPush `json:"pending,omitempty"`
}

// heldMarker is a sync marker line of the local file that stays local
// until something pushed descends from it.
type heldMarker struct {
	ID     string `json:"id"`
	Parent string `json:"parent"`
	Off    int64  `json:"off"` // where its line starts in the local file
	Len    int    `json:"len"` // its length, without the newline
}

// maxHeld bounds the markers a state holds back: past it the oldest go
// up with the next push (a label on the remote, never a lost parent).
const maxHeld = 256

// pendingPush is a manifest a push sent without seeing the reply: the
// sha256 and size of its bytes as sent, and the state the push would
// have left had it seen the reply (its generation in State.Gen).
type pendingPush struct {
	SHA256 string       `json:"sha256"`
	Size   int64        `json:"size"`
	State  sessionState `json:"state"`
}

// pending records, in st, a push whose manifest (sent, the bytes sent)
// got no reply; next is the state it would have left.
func (st *sessionState) pending(sent []byte, next sessionState) {
	next.Pending = nil
	st.Pending = &pendingPush{SHA256: sha(sent), Size: int64(len(sent)), State: next}
}

// settle decides on old's pending push, if it has one, once the remote's
// newest manifest h is known: when h is that generation and holds the
// bytes the push sent, the push did publish it, and the state it would
// have left is the state; otherwise the push is forgotten (a race lost,
// or a newer generation: the next run compares the sides). It returns
// old without a pending push.
func (r *Remote) settle(ctx context.Context, old *sessionState, h *head) *sessionState {
	if old == nil || old.Pending == nil {
		return old
	}
	p := old.Pending
	c := *old
	c.Pending = nil
	if h == nil || h.gen != p.State.Gen || h.size != p.Size {
		return &c
	}
	stored, _, err := r.b.get(ctx, h.key, max(h.size, 0))
	if err != nil || sha(stored) != p.SHA256 {
		return &c
	}
	s := p.State
	return &s
}

// stateFile is the local record of one store synced with one remote.
type stateFile struct {
	Remote   string                   `json:"remote"`
	Marker   bool                     `json:"marker,omitempty"` // the layout marker was checked
	Sessions map[string]*sessionState `json:"sessions"`
}

// statePath names the state file of a store and remote in dir: a hash of
// what identifies them, so that two stores or remotes never share one.
func statePath(dir string, o *Options) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%t\x00%t", o.Remote, o.AgentDir, o.AgentUseDir, o.Transform != nil, len(o.Recipients) > 0)
	for _, p := range o.Places {
		fmt.Fprintf(h, "\x00%d:%s", p.Format, p.Root)
	}
	return filepath.Join(dir, "sync-"+hex.EncodeToString(h.Sum(nil))[:24]+".json")
}

// legacyStatePath names the state file a sessctl before places kept for
// the same store and remote (it hashed AgentDir and AgentUseDir): the
// places of pi's, indusagi's or AgentUse's store, or of pi's and
// AgentUse's (the old "all"), on their default directories. "" when the
// places are other ones (a directory named a different set of sessions
// then). Without that state the first sync after the change compared
// every session in full, and where lines are transformed (redaction,
// encryption) made a conflict copy of every AgentUse file it pulled.
func legacyStatePath(dir string, o *Options) string {
	if o.Places == nil {
		return ""
	}
	old := *o
	old.Places = nil
	for _, p := range o.Places {
		switch {
		case p.Name == layout.PlacePi && old.AgentDir == "":
			old.AgentDir = filepath.Dir(p.Root)
		case p.Name == layout.PlaceIndusagi && len(o.Places) == 1:
			old.AgentDir = filepath.Dir(p.Root)
		case p.Name == layout.PlaceIndusagi:
			// The old "all" left indusagi out.
		case p.Name == layout.PlaceAgentUse && old.AgentUseDir == "":
			old.AgentUseDir = filepath.Dir(filepath.Dir(p.Root)) // <data>/agentuse/project
		default:
			return ""
		}
	}
	return statePath(dir, &old)
}

// loadState reads the state file at path, or the one at legacy (see
// legacyStatePath) when path does not exist yet; none is an empty state.
func loadState(fsys vfs.FS, path, legacy, remote string) (*stateFile, error) {
	st := &stateFile{Remote: remote, Sessions: map[string]*sessionState{}}
	if path == "" {
		return st, nil
	}
	data, err := fsys.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && legacy != "" {
		data, err = fsys.ReadFile(legacy)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read sync state %s: %w", path, err)
	}
	var in stateFile
	if json.Unmarshal(data, &in) != nil || in.Remote != remote || in.Sessions == nil {
		return st, nil // unreadable: start over; it only saves work
	}
	return &in, nil
}

func saveState(fsys vfs.FS, path string, st *stateFile) error {
	if path == "" {
		return nil
	}
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if err := vfs.MkdirAllSync(fsys, filepath.Dir(path), vfs.DirMode); err != nil {
		return fmt.Errorf("write sync state %s: %w", path, err)
	}
	return vfs.WriteFileAtomic(fsys, path, data, vfs.FileMode)
}

func validPiName(name string) bool {
	return layout.CheckName(name) == nil && layout.IsSessionFileName(name) && !strings.HasPrefix(name, ".")
}

func validAgentUseName(name string) bool {
	hash, dir, ok := strings.Cut(name, "/")
	return ok && layout.CheckName(hash) == nil && layout.CheckName(dir) == nil && !strings.HasPrefix(hash, ".") && !strings.HasPrefix(dir, ".")
}

func validRelPath(p string) bool {
	if p == "" {
		return false
	}
	for _, e := range strings.Split(p, "/") {
		if layout.CheckName(e) != nil {
			return false
		}
	}
	return true
}
