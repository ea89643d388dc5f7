package search

import (
	"bytes"
	"context"
	"fmt"
	"hash/crc32"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gofrs/flock"

	"github.com/sessctl/sessctl/layout/vfs"
)

// A database file changed by anything but sessctl (a failing disk, a
// stray program, a copy) cannot be trusted: SQLite notices damage only
// in what it reads, and quick_check reads neither FTS5's doclists nor
// the values of rows, so a search could silently miss hits. index.state
// records each database file as sessctl last left it (its stamp: size,
// modification and change time, identity); every process that had the
// databases open records them when it closes them, holding the index
// lock shared. A search compares the files with the record before it
// opens them. A file that differs is looked at again with the index lock
// exclusive, once the other searches are done and have recorded what
// they wrote; if it still differs, it is deleted and built again.
//
// The record is written (a new file renamed over it) and read holding
// state.lock, so the last record is of the files after every write that
// preceded it. A process killed before it recorded leaves files that
// differ: the next search rebuilds them, which costs time only.

const (
	stateName     = "index.state"
	stateLockName = "state.lock"
	stateMagic    = "sessctl search index state 1\n"
)

// stamps are the stamps of every shard's file.
type stamps [Shards]stamp

func (x *Index) currentStamps() stamps {
	var s stamps
	for i := range Shards {
		s[i] = stampOf(x.fsys(), x.shardPath(i))
	}
	return s
}

// withState runs fn holding state.lock.
func (x *Index) withState(ctx context.Context, fn func() error) error {
	l := flock.New(filepath.Join(x.dir, stateLockName), flock.SetPermissions(0o600))
	if err := take(ctx, x.fsys(), l, false); err != nil {
		return err
	}
	defer l.Unlock()
	return fn()
}

// loadState returns the recorded stamps; a record that is missing or
// damaged gives stamps that no existing file matches.
func (x *Index) loadState(ctx context.Context) (stamps, error) {
	var rec stamps
	err := x.withState(ctx, func() error {
		rec = x.readState()
		return nil
	})
	return rec, err
}

// untrusted reports whether a shard's file differs from the record.
func (x *Index) untrusted(ctx context.Context) (bool, error) {
	rec, err := x.loadState(ctx)
	if err != nil {
		return false, err
	}
	return rec != x.currentStamps(), nil
}

// saveState records the shards' files as they are now. The caller holds
// the index lock and has closed its databases (closing checkpoints).
func (x *Index) saveState(ctx context.Context) error {
	return x.withState(ctx, func() error {
		cur := x.currentStamps()
		if x.readState() == cur {
			return nil
		}
		return x.writeState(cur)
	})
}

func (x *Index) readState() stamps {
	var rec stamps
	data, err := x.fsys().ReadFile(filepath.Join(x.dir, stateName))
	if err != nil {
		return rec
	}
	body, sum, ok := bytes.Cut(bytes.TrimSuffix(data, []byte("\n")), []byte("\ncrc "))
	if !ok || strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 16) != string(sum) || !bytes.HasPrefix(body, []byte(stateMagic)) {
		return rec
	}
	lines := strings.Split(string(body[len(stateMagic):]), "\n")
	if len(lines) != Shards {
		return rec
	}
	var got stamps
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) != 6 || f[0] != filepath.Base(x.shardPath(i)) {
			return rec
		}
		var v [5]int64
		for k := range v {
			n, err := strconv.ParseInt(f[k+1], 10, 64)
			if err != nil {
				return rec
			}
			v[k] = n
		}
		got[i] = stamp{exists: v[0] == 1, size: v[1], mtime: v[2], id: uint64(v[3]), ctime: v[4]}
	}
	return got
}

// writeState writes the record by renaming a new file over it (without
// fsync: a record lost to a power cut costs a rebuild).
func (x *Index) writeState(s stamps) error {
	var b strings.Builder
	b.WriteString(stateMagic)
	for i, st := range s {
		exists := 0
		if st.exists {
			exists = 1
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s %d %d %d %d %d", filepath.Base(x.shardPath(i)), exists, st.size, st.mtime, int64(st.id), st.ctime)
	}
	body := b.String()
	data := body + "\ncrc " + strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte(body))), 16) + "\n"
	path := filepath.Join(x.dir, stateName)
	if err := vfs.WriteFileAtomicNoSync(x.fsys(), path, []byte(data), vfs.FileMode); err != nil {
		return fmt.Errorf("record search index state %s: %w", path, err)
	}
	return nil
}
