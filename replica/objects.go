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
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

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
	// Retired lists the data objects earlier generations named that this
	// one no longer does (compaction merged them), with when: a
	// collector spares them for a while, for readers still reading an
	// earlier generation.
	Retired []Retired `json:"retired,omitempty"`
	// Summary describes a JSONL session for listings of the remote
	// (sessctl list --remote) without reading its segments.
	Summary *Summary `json:"summary,omitempty"`
}

// Segment is one immutable data object of a JSONL session: whole lines,
// each ending in "\n".
type Segment struct {
	Object string `json:"object"` // key below the prefix: d/<sha256>
	SHA256 string `json:"sha256"` // of the object's bytes as stored
	Size   int64  `json:"size"`   // the object's bytes as stored
	Plain  int64  `json:"plain"`  // the lines' bytes (Size unless encrypted)
	Lines  int    `json:"lines"`
	// PlainSHA256 is the SHA-256 of the plain bytes, so that a machine
	// holding the same bytes knows without downloading them.
	PlainSHA256 string `json:"plainSha256,omitempty"`
	// Data, when set, holds the segment's bytes in the manifest itself
	// (an inline segment: no object is stored; SHA256 is of these
	// bytes, Size and Plain their length). Small pushes travel this way,
	// one request instead of two.
	Data []byte `json:"data,omitempty"`
}

// inline reports whether the segment's bytes are in the manifest.
func (s *Segment) inline() bool { return s.Data != nil }

// Retired is a data object a manifest's earlier generations named, and
// since when this one does not (RFC 3339).
type Retired struct {
	Object string `json:"object"`
	Time   string `json:"time"`
}

// Summary is what a listing of the remote shows of a JSONL session,
// kept current by every push: the header's id, cwd and timestamp, the
// session's name (its last session_info entry's), the text of its first
// user message with text (its text parts joined by spaces, as pi's
// listing), how many message entries it has (pi's messageCount: usage
// and context_edit entries are not messages), and the timestamp of its
// last user or assistant message.
type Summary struct {
	ID           string `json:"id,omitempty"`
	Cwd          string `json:"cwd,omitempty"`
	Created      string `json:"created,omitempty"`
	Name         string `json:"name,omitempty"`
	FirstMessage string `json:"firstMessage,omitempty"`
	Messages     int    `json:"messages"`
	LastMessage  string `json:"lastMessage,omitempty"`
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
	older      []string             // keys of older generations still present
	mtimes     map[string]time.Time // when each of the keys was written (as listed)
}

// noteTime records when key was written.
func (h *head) noteTime(key string, t time.Time) {
	if h.mtimes == nil {
		h.mtimes = map[string]time.Time{}
	}
	h.mtimes[key] = t
}

// stats counts what a run did over the network.
type stats struct {
	gets, puts, lists, deletes atomic.Int64
	uploaded                   atomic.Int64
	downloaded                 atomic.Int64
}

// counts returns the requests sent so far, by kind.
func (s *stats) counts() RequestCounts {
	return RequestCounts{Get: s.gets.Load(), Put: s.puts.Load(), List: s.lists.Load(), Delete: s.deletes.Load()}
}

// RequestCounts counts requests to the object store by kind: GETs (reads
// of objects), PUTs (writes of any kind: plain, create-only and
// compare-and-swap), LISTs (pages of up to 1,000 keys) and DELETEs.
type RequestCounts struct {
	Get, Put, List, Delete int64
}

// Total is the number of requests.
func (c RequestCounts) Total() int64 { return c.Get + c.Put + c.List + c.Delete }

// sub returns c minus d.
func (c RequestCounts) sub(d RequestCounts) RequestCounts {
	return RequestCounts{Get: c.Get - d.Get, Put: c.Put - d.Put, List: c.List - d.List, Delete: c.Delete - d.Delete}
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
	b.st.puts.Add(1)
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

// maxSmall bounds the reads of the small objects whose size nothing
// states beforehand: the marker, leases, tombstones.
const maxSmall = 1 << 20

// maxManifest bounds the read of a manifest: one that lists more is
// refused before it is read. A manifest names a JSONL session's segments
// (a dozen or so after compaction, ~250 bytes each, plus 64 KiB of
// inline lines) or an AgentUse session's files (~300 bytes each): 32
// MiB is about 100,000 files, and bounds what one manifest makes a run
// fetch and hold.
const maxManifest = 32 << 20

// get reads an object that should hold at most limit bytes: a longer one
// is refused after limit+1 bytes were read, so that what a listing or a
// manifest states bounds every read.
func (b *bucket) get(ctx context.Context, key string, limit int64) ([]byte, ObjectInfo, error) {
	b.st.gets.Add(1)
	rc, info, err := b.c.Get(ctx, key)
	if err != nil {
		return nil, info, err
	}
	defer rc.Close()
	if info.Size > limit {
		return nil, info, fmt.Errorf("read %s: %d bytes, more than the %d expected: %w", key, info.Size, limit, ErrCorruptRemote)
	}
	data := make([]byte, 0, min(max(info.Size, 0), limit)+1)
	data, err = readAllInto(io.LimitReader(rc, limit+1), data)
	b.st.downloaded.Add(int64(len(data)))
	if err != nil {
		return nil, info, err
	}
	if int64(len(data)) > limit {
		return nil, info, fmt.Errorf("read %s: more than the %d bytes expected: %w", key, limit, ErrCorruptRemote)
	}
	return data, info, nil
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
// segment descriptor (Lines unset). The key is the sha256 of the stored
// bytes, so an object is never overwritten with other bytes.
func (b *bucket) putData(ctx context.Context, plain []byte) (Segment, error) {
	stored, err := b.seal(plain)
	if err != nil {
		return Segment{}, err
	}
	sum := sha(stored)
	plainSum := sum // stored is plain unless it is encrypted
	if len(b.recipients) > 0 {
		plainSum = sha(plain)
	}
	obj := dataObject(sum)
	if err := b.put(ctx, obj, stored, false); err != nil {
		return Segment{}, err
	}
	return Segment{Object: obj, SHA256: sum, Size: int64(len(stored)), Plain: int64(len(plain)), PlainSHA256: plainSum}, nil
}

// inlineSegment is the segment of plain kept in the manifest.
func inlineSegment(plain []byte) Segment {
	sum := sha(plain)
	return Segment{Object: dataObject(sum), SHA256: sum, Size: int64(len(plain)), Plain: int64(len(plain)),
		Lines: bytes.Count(plain, []byte{'\n'}), Data: bytes.Clone(plain)}
}

// getData reads a data object (an AgentUse file) and checks it against
// its checksum and stated sizes.
func (b *bucket) getData(ctx context.Context, obj, sum string, size, plainSize int64) ([]byte, error) {
	if !validObject(obj) {
		return nil, fmt.Errorf("read %s: not a data object name: %w", obj, ErrCorruptRemote)
	}
	stored, _, err := b.get(ctx, obj, size)
	if err != nil {
		if isNotFound(err) {
			return nil, fmt.Errorf("read %s: a manifest names it but it is missing: %w: %w", obj, err, ErrCorruptRemote)
		}
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
	if len(stored) > maxManifest {
		// No reader would take it, this one neither.
		return nil, fmt.Errorf("publish %s: the manifest would be %d bytes, more than the %d a reader takes", m.Name, len(stored), maxManifest)
	}
	return stored, b.put(ctx, b.manifestKey(m.Kind, m.Name, m.Gen), stored, true)
}

// errManifestTooLarge is a manifest refused for its size, unread: not a
// torn one that a push may replace (it may be an older sessctl's, whole).
var errManifestTooLarge = errors.New("the manifest is larger than a reader takes")

// getManifest reads the manifest of h and checks that it describes h.
// The listing's size bounds the read.
func (b *bucket) getManifest(ctx context.Context, h *head) (*Manifest, error) {
	limit := int64(maxManifest)
	if h.size > limit {
		return nil, fmt.Errorf("read manifest %s: %d bytes: %w (%d): %w", h.key, h.size, errManifestTooLarge, limit, ErrCorruptRemote)
	}
	if h.size > 0 {
		limit = h.size
	}
	stored, _, err := b.get(ctx, h.key, limit)
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
	named := map[string]bool{}
	for _, s := range m.Segments {
		if !validObject(s.Object) || s.Plain < 0 || s.Size < 0 {
			return nil, fmt.Errorf("read manifest %s: bad segment %q: %w", h.key, s.Object, ErrCorruptRemote)
		}
		// A segment is content-addressed and holds distinct entries: a
		// manifest naming one twice would restore its lines twice.
		if !s.inline() {
			if named[s.Object] {
				return nil, fmt.Errorf("read manifest %s: segment %q is named twice: %w", h.key, s.Object, ErrCorruptRemote)
			}
			named[s.Object] = true
		}
		if s.inline() && (sha(s.Data) != s.SHA256 || int64(len(s.Data)) != s.Plain || s.Size != s.Plain) {
			return nil, fmt.Errorf("read manifest %s: inline segment %q does not match its checksum or sizes: %w", h.key, s.Object, ErrCorruptRemote)
		}
		total += s.Plain
	}
	if m.Kind == KindPi && total != m.Size {
		return nil, fmt.Errorf("read manifest %s: segments hold %d bytes, the manifest says %d: %w", h.key, total, m.Size, ErrCorruptRemote)
	}
	paths := map[string]bool{}
	for _, f := range m.Files {
		if !validObject(f.Object) || !validRelPath(f.Path) || f.Size < 0 || f.Plain < 0 {
			return nil, fmt.Errorf("read manifest %s: bad file %q: %w", h.key, f.Path, ErrCorruptRemote)
		}
		if paths[f.Path] {
			return nil, fmt.Errorf("read manifest %s: file %q is named twice: %w", h.key, f.Path, ErrCorruptRemote)
		}
		paths[f.Path] = true
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
			b.st.lists.Add(n/1000 + 1)
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
			h = &head{kind: kind, name: name, gen: gen, key: obj.Key, size: obj.Size}
			heads[id] = h
		case gen > h.gen:
			h.older = append(h.older, h.key)
			h.gen, h.key, h.size = gen, obj.Key, obj.Size
		default:
			h.older = append(h.older, obj.Key)
		}
		h.noteTime(obj.Key, obj.ModTime)
	}
	b.st.lists.Add(n/1000 + 1)
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

// sortedHeads returns the heads in a stable order.
func sortedHeads(m map[string]*head) []*head {
	out := make([]*head, 0, len(m))
	for _, h := range m {
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].kind != out[j].kind {
			return out[i].kind < out[j].kind
		}
		return out[i].name < out[j].name
	})
	return out
}

func (b *bucket) remove(ctx context.Context, key string) error {
	b.st.deletes.Add(1)
	return b.c.Delete(ctx, key)
}
