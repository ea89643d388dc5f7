package replica

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/sessctl/sessctl/engine"

	"github.com/sessctl/sessctl/layout/vfs"
)

// scanLocal finds the sessions of the store: the session files below
// each JSONL root (pi's sessions/), as engine.Store.Files finds them for every command that walks
// a store, and AgentUse's <hash>/session/<dir>/ below each
// projects root. skipped lists
// what could not be read or is not replicated (each names its path).
func (r *Remote) scanLocal(ctx context.Context) (out map[string]*local, warns, skipped []Warning, err error) {
	out = map[string]*local{}
	fsys := r.opts.fs()
	for _, root := range r.opts.jsonlRoots() {
		st, err := engine.OpenStore(ctx, engine.StoreOptions{Dir: root, FS: fsys})
		if err != nil {
			return nil, nil, nil, fmt.Errorf("list %s: %w", root, err)
		}
		for f, err := range st.Files(ctx) {
			if err != nil {
				if f.Path == "" {
					if errors.Is(err, fs.ErrNotExist) {
						break
					}
					return nil, nil, nil, fmt.Errorf("list %s: %w", root, err)
				}
				skipped = append(skipped, walkWarning(err))
				continue
			}
			if err := ctx.Err(); err != nil {
				return nil, nil, nil, err
			}
			name := filepath.Base(f.Path)
			if f.Link {
				skipped = append(skipped, Warning{Key: f.Path, Err: errors.New("a symbolic link: not synced (sync the file it points to)")})
				continue
			}
			if !validPiName(name) {
				skipped = append(skipped, Warning{Key: f.Path, Err: errors.New("this name cannot be synced")})
				continue
			}
			fi, err := fsys.Lstat(f.Path)
			if err != nil {
				skipped = append(skipped, Warning{Key: f.Path, Err: err})
				continue
			}
			if !fi.Mode().IsRegular() {
				continue // replaced since the walk
			}
			id := KindPi + "/" + name
			if prev, dup := out[id]; dup {
				warns = append(warns, Warning{Key: f.Path, Err: fmt.Errorf("another file has this name (%s); only that one is synced", prev.path)})
				continue
			}
			out[id] = &local{path: f.Path, size: fi.Size(), mtime: fi.ModTime().UnixNano()}
		}
	}
	for _, root := range r.opts.projectRoots() {
		if err := r.scanAgentUse(ctx, root, out, &warns, &skipped); err != nil {
			return nil, nil, nil, err
		}
	}
	return out, warns, skipped, nil
}

// walkWarning is a Warning for what a walk of the store left out: a
// directory that could not be read, or a file that is not a regular one.
func walkWarning(err error) Warning {
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return Warning{Err: err}
	}
	if errors.Is(err, vfs.ErrNotRegular) {
		return Warning{Key: pe.Path, Err: fmt.Errorf("not synced: %w", pe.Err)}
	}
	return Warning{Key: pe.Path, Err: fmt.Errorf("directory could not be read: %w", pe.Err)}
}

// markerKey is the object that says which layout the prefix holds.
func (b *bucket) markerKey() string { return "sessctl-replica.json" }

type marker struct {
	Format    string `json:"format"`
	Encrypted bool   `json:"encrypted"`
}

// checkMarker reads the layout marker (writing it before a first push)
// and refuses a remote encrypted otherwise than configured. ok says the
// marker is there now.
func (r *Remote) checkMarker(ctx context.Context, m mode) (ok bool, err error) {
	err = r.checkMarker1(ctx, m, &ok)
	return ok, err
}

func (r *Remote) checkMarker1(ctx context.Context, m mode, found *bool) error {
	data, _, err := r.b.get(ctx, r.b.markerKey(), maxSmall)
	enc := len(r.opts.Recipients) > 0
	switch {
	case err != nil && isNotFound(err):
		if m != modePush && m != modeSync {
			return nil
		}
		body, _ := json.Marshal(marker{Format: FormatVersion, Encrypted: enc})
		if err := r.b.put(ctx, r.b.markerKey(), body, true); err != nil && !errors.Is(err, errRace) {
			return err
		}
		*found = true
		return nil
	case err != nil:
		if errors.Is(err, ErrNoBucket) {
			return fmt.Errorf("remote %s: %w", r.opts.Remote, err)
		}
		return err
	}
	var mk marker
	if json.Unmarshal(data, &mk) != nil || mk.Format != FormatVersion {
		return fmt.Errorf("remote %s: %s is not a sessctl replica marker (format %q): %w", r.opts.Remote, r.b.markerKey(), mk.Format, ErrCorruptRemote)
	}
	if mk.Encrypted && !enc && len(r.opts.Identities) == 0 {
		return fmt.Errorf("remote %s: %w", r.opts.Remote, ErrEncrypted)
	}
	if !mk.Encrypted && enc {
		return fmt.Errorf("remote %s holds unencrypted sessions; refusing to mix in encrypted ones", r.opts.Remote)
	}
	if mk.Encrypted && !enc && (m == modePush || m == modeSync) {
		return fmt.Errorf("remote %s is encrypted; pushing needs the recipients too", r.opts.Remote)
	}
	*found = true
	return nil
}

// head lists one session's manifests.
func (b *bucket) head(ctx context.Context, kind, name string) (*head, error) {
	pre := "m/" + kind + "/" + name + "/"
	var h *head
	var n int64
	defer func() { b.st.lists.Add(n/1000 + 1) }()
	for obj, err := range b.c.List(ctx, pre) {
		if err != nil {
			return nil, err
		}
		n++
		k, nm, gen, ok := parseManifestKey(obj.Key[2:])
		if !ok || k != kind || nm != name {
			continue
		}
		if h == nil {
			h = &head{kind: kind, name: name, gen: gen, key: obj.Key, size: obj.Size}
		} else if gen > h.gen {
			h.older = append(h.older, h.key)
			h.gen, h.key, h.size = gen, obj.Key, obj.Size
		} else {
			h.older = append(h.older, obj.Key)
		}
	}
	return h, nil
}
