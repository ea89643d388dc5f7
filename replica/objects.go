package replica

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"

	"filippo.io/age"
)

// FormatVersion names the bucket layout in manifests and the marker
// object (docs/spec/replication.md).
const FormatVersion = "sessctl-replica/1"

// The kinds of replicated session.
const (
	KindPi       = "pi"       // a pi/indusagi JSONL session file
	KindAgentUse = "agentuse" // an AgentUse session directory
)

// Manifest is the small object that names one version of one session's
// replica: for a JSONL session the segments whose concatenation is the
// session's lines, for an AgentUse session its files.
type Manifest struct {
	Format    string    `json:"format"`
	Kind      string    `json:"kind"`
	Name      string    `json:"name"`
	Gen       int64     `json:"gen"`
	Host      string    `json:"host,omitempty"`
	Time      string    `json:"time,omitempty"`
	Encrypted bool      `json:"encrypted,omitempty"`
	Size      int64     `json:"size"`
	Lines     int       `json:"lines,omitempty"`
	Segments  []Segment `json:"segments,omitempty"`
	Files     []File    `json:"files,omitempty"`
}

// Segment is one immutable data object of a JSONL session: whole lines,
// each ending in "\n".
type Segment struct {
	Object string `json:"object"` // key below the prefix: d/<sha256>
	SHA256 string `json:"sha256"` // of the object's bytes as stored
	Size   int64  `json:"size"`   // the object's bytes as stored
	Plain  int64  `json:"plain"`  // the lines' bytes (Size unless encrypted)
	Lines  int    `json:"lines"`
}

// File is one file of an AgentUse session directory.
type File struct {
	Path   string `json:"path"` // relative, with "/"
	Object string `json:"object"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
	Plain  int64  `json:"plain"`
}

// head is what a listing says of a session's newest manifest.
type head struct {
	kind, name string
	gen        int64
	key        string
	size       int64
	older      []string // keys of older generations still present
}

// stats counts what a run did over the network.
type stats struct {
	requests   atomic.Int64
	uploaded   atomic.Int64
	downloaded atomic.Int64
}

// bucket is the object store seen through the layout: the keys of
// docs/spec/replication.md, encryption, counting.
type bucket struct {
	c          Client
	remote     string // names the remote in warnings
	recipients []age.Recipient
	identities []age.Identity
	st         *stats
}

func (b *bucket) manifestKey(kind, name string, gen int64) string {
	return "m/" + kind + "/" + name + "/" + fmt.Sprintf("%010d", gen)
}

func dataObject(sum string) string { return "d/" + sum }

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// seal encrypts plain when encryption is configured.
func (b *bucket) seal(plain []byte) ([]byte, error) {
	if len(b.recipients) == 0 {
		return plain, nil
	}
	var out bytes.Buffer
	w, err := age.Encrypt(&out, b.recipients...)
	if err != nil {
		return nil, fmt.Errorf("encrypt: %w", err)
	}
	if _, err := w.Write(plain); err != nil {
		return nil, fmt.Errorf("encrypt: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("encrypt: %w", err)
	}
	return out.Bytes(), nil
}

// ageMagic starts every age file.
var ageMagic = []byte("age-encryption.org/")

// open decrypts stored bytes that are an age file.
func (b *bucket) open(key string, stored []byte) ([]byte, error) {
	if !bytes.HasPrefix(stored, ageMagic) {
		if len(b.recipients) > 0 {
			return nil, fmt.Errorf("read %s: the object is not encrypted but encryption is configured: %w", key, ErrCorruptRemote)
		}
		return stored, nil
	}
	if len(b.identities) == 0 {
		return nil, fmt.Errorf("read %s: %w", key, ErrEncrypted)
	}
	r, err := age.Decrypt(bytes.NewReader(stored), b.identities...)
	if err != nil {
		return nil, fmt.Errorf("decrypt %s: %w", key, err)
	}
	plain, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("decrypt %s: %w: %w", key, err, ErrCorruptRemote)
	}
	return plain, nil
}

// ErrEncrypted is returned for an encrypted remote when no identity to
// decrypt it is configured.
var ErrEncrypted = errors.New("the remote is encrypted and no identity was given")

// ErrCorruptRemote is returned (wrapped) for an object whose bytes do not
// match what its manifest says, or a manifest that cannot be read.
var ErrCorruptRemote = errors.New("corrupt remote object")

// ErrConflict is returned (wrapped) when another writer put the same
// manifest generation first; the caller reads the remote again.
var errRace = errors.New("another writer published this generation first")

func (b *bucket) put(ctx context.Context, key string, data []byte, exclusive bool) error {
	b.st.requests.Add(1)
	var err error
	if exclusive {
		_, err = b.c.PutIfAbsent(ctx, key, bytes.NewReader(data), int64(len(data)))
		if errors.Is(err, ErrObjectExists) {
			return errRace
		}
	} else {
		_, err = b.c.Put(ctx, key, bytes.NewReader(data), int64(len(data)))
	}
	if err != nil {
		return err
	}
	b.st.uploaded.Add(int64(len(data)))
	return nil
}

func (b *bucket) get(ctx context.Context, key string) ([]byte, error) {
	b.st.requests.Add(1)
	rc, info, err := b.c.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data := make([]byte, 0, min(max(info.Size, 0), 64<<20))
	data, err = readAllInto(rc, data)
	if err != nil {
		return nil, err
	}
	b.st.downloaded.Add(int64(len(data)))
	return data, nil
}

// readAllInto is io.ReadAll into buf's room.
func readAllInto(r io.Reader, buf []byte) ([]byte, error) {
	w := bytes.NewBuffer(buf)
	_, err := w.ReadFrom(r)
	return w.Bytes(), err
}

// objectName names an object of the remote for people: the remote's URL
// and the key.
func (b *bucket) objectName(key string) string {
	return strings.TrimSuffix(b.remote, "/") + "/" + key
}

func isNotFound(err error) bool { return errors.Is(err, ErrObjectNotFound) }

// putData stores plain as a content-addressed data object and returns its
// descriptor. The key is the sha256 of the stored bytes, so an object is
// never overwritten with other bytes.
func (b *bucket) putData(ctx context.Context, plain []byte) (obj, sum string, size int64, err error) {
	stored, err := b.seal(plain)
	if err != nil {
		return "", "", 0, err
	}
	sum = sha(stored)
	obj = dataObject(sum)
	if err := b.put(ctx, obj, stored, false); err != nil {
		return "", "", 0, err
	}
	return obj, sum, int64(len(stored)), nil
}

// getData reads a data object and checks it against its checksum.
func (b *bucket) getData(ctx context.Context, obj, sum string, plainSize int64) ([]byte, error) {
	if !validObject(obj) {
		return nil, fmt.Errorf("read %s: not a data object name: %w", obj, ErrCorruptRemote)
	}
	stored, err := b.get(ctx, obj)
	if err != nil {
		return nil, err
	}
	if sha(stored) != sum {
		return nil, fmt.Errorf("read %s: sha256 does not match the manifest: %w", obj, ErrCorruptRemote)
	}
	plain, err := b.open(obj, stored)
	if err != nil {
		return nil, err
	}
	if int64(len(plain)) != plainSize {
		return nil, fmt.Errorf("read %s: %d bytes, the manifest says %d: %w", obj, len(plain), plainSize, ErrCorruptRemote)
	}
	return plain, nil
}

func validObject(obj string) bool {
	s, ok := strings.CutPrefix(obj, "d/")
	if !ok || len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// putManifest publishes m as generation m.Gen; errRace when that
// generation exists already.
func (b *bucket) putManifest(ctx context.Context, m *Manifest) error {
	_, err := b.publish(ctx, m)
	return err
}

// publish is putManifest, also returning the bytes sent (nil when none
// were): when the reply is lost they may be on the remote all the same.
func (b *bucket) publish(ctx context.Context, m *Manifest) ([]byte, error) {
	data, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	stored, err := b.seal(data)
	if err != nil {
		return nil, err
	}
	return stored, b.put(ctx, b.manifestKey(m.Kind, m.Name, m.Gen), stored, true)
}

// getManifest reads the manifest of h and checks that it describes h.
func (b *bucket) getManifest(ctx context.Context, h *head) (*Manifest, error) {
	stored, err := b.get(ctx, h.key)
	if err != nil {
		return nil, err
	}
	plain, err := b.open(h.key, stored)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(plain, &m); err != nil {
		return nil, fmt.Errorf("read manifest %s: %w: %w", h.key, err, ErrCorruptRemote)
	}
	if m.Format != FormatVersion || m.Kind != h.kind || m.Name != h.name || m.Gen != h.gen {
		return nil, fmt.Errorf("read manifest %s: it describes %s %s generation %d (format %q): %w", h.key, m.Kind, m.Name, m.Gen, m.Format, ErrCorruptRemote)
	}
	var total int64
	for _, s := range m.Segments {
		if !validObject(s.Object) || s.Plain < 0 {
			return nil, fmt.Errorf("read manifest %s: bad segment %q: %w", h.key, s.Object, ErrCorruptRemote)
		}
		total += s.Plain
	}
	if m.Kind == KindPi && total != m.Size {
		return nil, fmt.Errorf("read manifest %s: segments hold %d bytes, the manifest says %d: %w", h.key, total, m.Size, ErrCorruptRemote)
	}
	for _, f := range m.Files {
		if !validObject(f.Object) || !validRelPath(f.Path) {
			return nil, fmt.Errorf("read manifest %s: bad file %q: %w", h.key, f.Path, ErrCorruptRemote)
		}
	}
	return &m, nil
}

// Warning is something a run noticed and went past: a foreign object in
// the bucket, a session it could not sync.
type Warning struct {
	Key string // the object, or the session
	Err error
}

func (w Warning) Error() string { return w.Key + ": " + w.Err.Error() }

// list returns the newest manifest of every session below the prefix, in
// one listing (1,000 keys a request), and the keys it could not place.
func (b *bucket) list(ctx context.Context) (map[string]*head, []Warning, error) {
	heads := map[string]*head{}
	var warns []Warning
	pre := "m/"
	var n int64
	for obj, err := range b.c.List(ctx, pre) {
		if err != nil {
			b.st.requests.Add(n/1000 + 1)
			return nil, nil, err
		}
		n++
		rest := strings.TrimPrefix(obj.Key, pre)
		kind, name, gen, ok := parseManifestKey(rest)
		if !ok {
			warns = append(warns, Warning{Key: b.objectName(obj.Key), Err: errors.New("not a manifest of this layout; ignored")})
			continue
		}
		id := kind + "/" + name
		h := heads[id]
		switch {
		case h == nil:
			heads[id] = &head{kind: kind, name: name, gen: gen, key: obj.Key, size: obj.Size}
		case gen > h.gen:
			h.older = append(h.older, h.key)
			h.gen, h.key, h.size = gen, obj.Key, obj.Size
		default:
			h.older = append(h.older, obj.Key)
		}
	}
	b.st.requests.Add(n/1000 + 1)
	return heads, warns, nil
}

// parseManifestKey splits "<kind>/<name>/<gen>".
func parseManifestKey(rest string) (kind, name string, gen int64, ok bool) {
	kind, rest, ok = strings.Cut(rest, "/")
	if !ok {
		return
	}
	i := strings.LastIndexByte(rest, '/')
	if i < 0 || len(rest)-i-1 != 10 {
		return "", "", 0, false
	}
	g, err := strconv.ParseInt(rest[i+1:], 10, 64)
	if err != nil || g < 1 {
		return "", "", 0, false
	}
	name = rest[:i]
	switch kind {
	case KindPi:
		ok = validPiName(name)
	case KindAgentUse:
		ok = validAgentUseName(name)
	default:
		ok = false
	}
	return kind, name, g, ok
}

func (b *bucket) remove(ctx context.Context, key string) error {
	return b.c.Delete(ctx, key)
}
