package replica

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/minio/minio-go/v7"

	"github.com/sessctl/sessctl/layout"
)

// scanLocal finds the sessions of the store: pi's sessions/<cwd dir>/*.jsonl
// and AgentUse's project/<hash>/session/<dir>/.
func (r *Remote) scanLocal(ctx context.Context) (map[string]*local, []Warning, error) {
	out := map[string]*local{}
	var warns []Warning
	fsys := r.opts.fs()
	if r.opts.AgentDir != "" {
		root := layout.SessionsDir(r.opts.AgentDir)
		dirs, err := fsys.ReadDir(root)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("list %s: %w", root, err)
		}
		for _, d := range dirs {
			if !d.IsDir() {
				continue
			}
			dir := filepath.Join(root, d.Name())
			files, err := fsys.ReadDir(dir)
			if err != nil {
				warns = append(warns, Warning{Key: dir, Err: err})
				continue
			}
			for _, f := range files {
				name := f.Name()
				if !f.Type().IsRegular() || !validPiName(name) {
					continue
				}
				if err := ctx.Err(); err != nil {
					return nil, nil, err
				}
				fi, err := f.Info()
				if err != nil {
					continue
				}
				id := KindPi + "/" + name
				if prev, dup := out[id]; dup {
					warns = append(warns, Warning{Key: filepath.Join(dir, name), Err: fmt.Errorf("another file has this name (%s); only that one is synced", prev.path)})
					continue
				}
				out[id] = &local{path: filepath.Join(dir, name), size: fi.Size(), mtime: fi.ModTime().UnixNano()}
			}
		}
	}
	if r.opts.AgentUseDir != "" {
		if err := r.scanAgentUse(ctx, out, &warns); err != nil {
			return nil, nil, err
		}
	}
	return out, warns, nil
}

// markerKey is the object that says which layout the prefix holds.
func (b *bucket) markerKey() string { return b.prefix + "sessctl-replica.json" }

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
	data, err := r.b.get(ctx, r.b.markerKey())
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
		if r := minio.ToErrorResponse(errors.Unwrap(err)); r.Code == "NoSuchBucket" {
			return fmt.Errorf("remote %s: the bucket does not exist: %w", r.BucketName, err)
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
	pre := b.prefix + "m/" + kind + "/" + name + "/"
	var h *head
	b.st.requests.Add(1)
	for obj := range b.c.ListObjects(ctx, b.name, minio.ListObjectsOptions{Prefix: pre, Recursive: true}) {
		if obj.Err != nil {
			return nil, fmt.Errorf("list %s: %w", pre, obj.Err)
		}
		k, n, gen, ok := parseManifestKey(obj.Key[len(b.prefix)+2:])
		if !ok || k != kind || n != name {
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
