package search

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/search/internal/textindex"
)

// The own engine's state is a base file (ownStateName, the whole state)
// and a log beside it (ownLogName) of what each update since changed: the
// records of the files and sessions it touched, and the new MaxID,
// NextFile, Dead, last Times and Stamps. An update appends one record
// (checksummed, fsync'd before the update's answer), so what it writes is
// in proportion to what it changed, not to the files indexed; once the
// log passes a quarter of the base (and
// ownLogMin), the next update writes a new base
// (compaction) and removes the log.
//
// The log's header names the base's Gen: a log of another base (a crash
// between a compaction's rename and the log's removal) holds nothing the
// base lacks, and is ignored. Any other damage (a torn or bad record, a
// record that does not follow from the ones before) makes the state
// untrusted: the index is built again, never answered from.
//
// Log file: magic "SXOL", version uint32, Gen uint64, CRC-32C of these
// 16 bytes; then records, each length uint32, CRC-32C of the payload
// uint32, payload (an ownDelta, ownstatecodec.go). Little-endian.
const (
	ownLogName    = "state.log"
	ownLogMagic   = "SXOL"
	ownLogHeader  = 20
	ownLogRecHead = 8
	ownLogMaxRec  = 1 << 30
)

// ownLogMin is the size a log may reach whatever its base's (tests set
// it lower to see compactions of a small index).
var ownLogMin int64 = 64 << 10

// ownDelta is one log record: what an update changed.
type ownDelta struct {
	MaxID        uint64
	NextFile     uint32
	Dead         uint64
	TimesFrom    int
	Times        []int64 // Times[TimesFrom:] after the update
	Stamps       map[string]ownStamp
	Files        map[string]*ownFile
	Gone         []string
	Sessions     map[string]*ownSession
	GoneSessions []string
}

// ownSaved is what the in-memory state knows of its files on disk.
type ownSaved struct {
	baseSize int64 // 0: no base yet (the next save writes one)
	logSize  int64 // 0: no log of this base
	maxID    uint64
	files    map[string]bool // changed since the last save
	sessions map[string]bool

	// Built from the state when first needed, then kept current.
	byNo map[uint32]string // path by file number
	refs map[string]int    // files by session
}

// ref counts n more files of session (once the counts are built).
func (st *ownState) ref(session string, n int) {
	if st.saved.refs != nil {
		st.saved.refs[session] += n
	}
}

// forgetUnused removes the sessions touched since the last save that no
// file refers to any more.
func (st *ownState) forgetUnused() {
	if len(st.saved.sessions) == 0 {
		return
	}
	// A session that a file touched since the save still refers to is in
	// use: an update that only appended counts no file's session (in a new
	// process the count of every file's was 10-15 ms at 50,000 files).
	used := make(map[string]bool, len(st.saved.files))
	for path := range st.saved.files {
		if r := st.Files[path]; r != nil {
			used[r.Session] = true
		}
	}
	var doubt []string
	for s := range st.saved.sessions {
		if !used[s] {
			doubt = append(doubt, s)
		}
	}
	if len(doubt) == 0 {
		return
	}
	if st.saved.refs == nil {
		st.saved.refs = make(map[string]int, len(st.Sessions))
		for _, r := range st.Files {
			st.saved.refs[r.Session]++
		}
	}
	for _, s := range doubt {
		if st.saved.refs[s] <= 0 {
			delete(st.Sessions, s)
			delete(st.saved.refs, s)
		}
	}
}

// touch notes that path's record (and its session's) changed.
func (st *ownState) touch(path, session string) {
	if st.saved.files == nil {
		st.saved.files = map[string]bool{}
	}
	st.saved.files[path] = true
	if session != "" {
		st.touchSession(session)
	}
}

func (st *ownState) touchSession(session string) {
	if st.saved.sessions == nil {
		st.saved.sessions = map[string]bool{}
	}
	st.saved.sessions[session] = true
}

// delta returns the log record of what changed since the last save.
func (st *ownState) delta() *ownDelta {
	d := &ownDelta{MaxID: st.MaxID, NextFile: st.NextFile, Dead: st.Dead, Stamps: st.Stamps,
		Files: map[string]*ownFile{}, Sessions: map[string]*ownSession{}}
	d.TimesFrom = min(int(st.saved.maxID/ownTimeBlock), len(st.Times))
	d.Times = st.Times[d.TimesFrom:]
	for p := range st.saved.files {
		if r := st.Files[p]; r != nil {
			d.Files[p] = r
		} else {
			d.Gone = append(d.Gone, p)
		}
	}
	for s := range st.saved.sessions {
		if se := st.Sessions[s]; se != nil {
			d.Sessions[s] = se
		} else {
			d.GoneSessions = append(d.GoneSessions, s)
		}
	}
	return d
}

// apply changes st as the update that logged d did.
func (st *ownState) apply(d *ownDelta) error {
	if d.MaxID < st.MaxID || d.NextFile < st.NextFile || d.TimesFrom < 0 || d.TimesFrom > len(st.Times) {
		return errors.New("log record does not follow")
	}
	st.MaxID, st.NextFile, st.Dead, st.Stamps = d.MaxID, d.NextFile, d.Dead, d.Stamps
	st.Times = append(st.Times[:d.TimesFrom], d.Times...)
	for p, r := range d.Files {
		if r == nil {
			return errors.New("log record has a nil file")
		}
		st.Files[p] = r
	}
	for _, p := range d.Gone {
		delete(st.Files, p)
	}
	for s, se := range d.Sessions {
		if se == nil {
			return errors.New("log record has a nil session")
		}
		st.Sessions[s] = se
	}
	for _, s := range d.GoneSessions {
		delete(st.Sessions, s)
	}
	return nil
}

// readOwnLog applies the log beside the base at path (of st, just
// decoded, of data bytes) to st. No log, or a log of another base, is no
// change; a damaged one is textindex.ErrCorrupt.
func readOwnLog(fsys vfs.FS, path string, st *ownState, baseSize int64) error {
	st.saved = ownSaved{baseSize: baseSize}
	logPath := filepath.Join(filepath.Dir(path), ownLogName)
	data, err := fsys.ReadFile(logPath)
	if errors.Is(err, fs.ErrNotExist) {
		st.saved.maxID = st.MaxID
		return nil
	}
	if err != nil {
		return err
	}
	bad := func(why string) error {
		return fmt.Errorf("%s: %s: %w", logPath, why, textindex.ErrCorrupt)
	}
	if len(data) < ownLogHeader || string(data[:4]) != ownLogMagic ||
		crc32.Checksum(data[:16], crcTable) != binary.LittleEndian.Uint32(data[16:]) {
		return bad("bad header")
	}
	if binary.LittleEndian.Uint32(data[4:]) != ownVersion {
		return bad("another version")
	}
	if binary.LittleEndian.Uint64(data[8:]) != st.Gen {
		// Of an older base: everything in it is in this one.
		st.saved.maxID = st.MaxID
		return nil
	}
	for off := ownLogHeader; off < len(data); {
		if len(data)-off < ownLogRecHead {
			return bad("torn record")
		}
		n := int(binary.LittleEndian.Uint32(data[off:]))
		sum := binary.LittleEndian.Uint32(data[off+4:])
		off += ownLogRecHead
		if n > len(data)-off {
			return bad("torn record")
		}
		rec := data[off : off+n]
		off += n
		if crc32.Checksum(rec, crcTable) != sum {
			return bad("bad record checksum")
		}
		d, err := decodeOwnDelta(rec)
		if err != nil {
			return bad(err.Error())
		}
		if err := st.apply(d); err != nil {
			return bad(err.Error())
		}
	}
	st.saved.logSize = int64(len(data))
	st.saved.maxID = st.MaxID
	return nil
}

// ownLogRecord encodes d as a log record.
func ownLogRecord(d *ownDelta) ([]byte, error) {
	rec := encodeOwnDelta(make([]byte, ownLogRecHead, 256), d)
	if len(rec)-ownLogRecHead > ownLogMaxRec {
		return nil, errors.New("state log record too large")
	}
	binary.LittleEndian.PutUint32(rec, uint32(len(rec)-ownLogRecHead))
	binary.LittleEndian.PutUint32(rec[4:], crc32.Checksum(rec[ownLogRecHead:], crcTable))
	return rec, nil
}

// writeState writes what changed since the last save: a record appended
// to the log, or, with no base yet or a log past a quarter of the base,
// the whole state as a new base.
func (o *own) writeState() error {
	st := o.st
	if st.saved.baseSize == 0 {
		return o.writeBase()
	}
	rec, err := ownLogRecord(st.delta())
	if err != nil {
		return err
	}
	if st.saved.logSize+int64(len(rec)) > max(st.saved.baseSize/4, ownLogMin) {
		return o.writeBase()
	}
	fsys := o.x.fsys()
	logPath := filepath.Join(o.dir, ownLogName)
	if st.saved.logSize == 0 {
		// A new log: written aside and renamed, so that a log of an older
		// base (or a torn one) is never appended to.
		var h [ownLogHeader]byte
		copy(h[:], ownLogMagic)
		binary.LittleEndian.PutUint32(h[4:], ownVersion)
		binary.LittleEndian.PutUint64(h[8:], st.Gen)
		binary.LittleEndian.PutUint32(h[16:], crc32.Checksum(h[:16], crcTable))
		data := append(h[:], rec...)
		if err := vfs.WriteFileAtomic(fsys, logPath, data, vfs.FileMode); err != nil {
			return err
		}
		st.saved.logSize = int64(len(data))
		st.saved.clear(st.MaxID)
		return nil
	}
	if err := appendOwnLog(fsys, logPath, st.saved.logSize, rec); err != nil {
		// What the log holds is not known: without a state, the index is
		// built again.
		if rerr := fsys.Remove(filepath.Join(o.dir, ownStateName)); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
		st.saved.reset()
		return err
	}
	st.saved.logSize += int64(len(rec))
	st.saved.clear(st.MaxID)
	return nil
}

func (s *ownSaved) clear(maxID uint64) {
	s.files, s.sessions, s.maxID = nil, nil, maxID
}

// reset forgets what is on disk (the next save writes a base), keeping
// the tables built from the state.
func (s *ownSaved) reset() {
	*s = ownSaved{byNo: s.byNo, refs: s.refs}
}

// appendOwnLog appends rec to the log, which must be size bytes long,
// and syncs it.
func appendOwnLog(fsys vfs.FS, path string, size int64, rec []byte) error {
	f, err := fsys.OpenFile(path, os.O_WRONLY|os.O_APPEND|vfs.NoFollow, 0)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err == nil && fi.Size() != size {
		err = fmt.Errorf("%s: %d bytes, not %d", path, fi.Size(), size)
	}
	if err == nil {
		_, err = f.Write(rec)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeBase writes the whole state as a new base (another Gen) and
// removes the log, whose records it holds.
func (o *own) writeBase() error {
	st := o.st
	st.Gen = max(st.Gen+1, uint64(time.Now().UnixNano()))
	data := encodeOwnState(make([]byte, 4, max(st.saved.baseSize+st.saved.logSize, 1<<10)), st)
	binary.LittleEndian.PutUint32(data, crc32.Checksum(data[4:], crcTable))
	fsys := o.x.fsys()
	if err := vfs.WriteFileAtomic(fsys, filepath.Join(o.dir, ownStateName), data, vfs.FileMode); err != nil {
		st.saved.reset()
		return err
	}
	st.saved.reset()
	st.saved.baseSize, st.saved.maxID = int64(len(data)), st.MaxID
	// A crash before the log is gone leaves it naming the older Gen: it
	// is ignored.
	if err := fsys.Remove(filepath.Join(o.dir, ownLogName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func crcOf(b []byte) uint32 { return crc32.Checksum(b, crcTable) }
