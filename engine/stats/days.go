package stats

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/internal/jsonl"
	"github.com/sessctl/sessctl/layout/vfs"
	"github.com/sessctl/sessctl/migrate"
)

// What a session file spent per day and model: the breakdown the
// viewer's cost column and stats page show. The stats index keeps it per
// quarter of an hour (UTC), which every time zone's days are made of, so
// that it is turned into days of the local time zone when it is read,
// whatever the zone was when the file was counted.

// DayUsage is what a session file spent on one day with one model, as
// Scope counts it (EntrySpent).
type DayUsage struct {
	// Day is the day in the local time zone, YYYY-MM-DD, of the entries
	// (EntryTime); "unknown" for entries without a time.
	Day string
	// Model is the name Scope files the usage under (Model.Model).
	Model    string
	Messages int // assistant messages
	Usage    Usage
}

// FileUsage is what one session file spent, per day and model.
type FileUsage struct {
	Path string
	// Size and ModTime are the file's when it was counted.
	Size    int64
	ModTime time.Time
	// Days is sorted by day, then model; the days without a time
	// ("unknown") sort last.
	Days []DayUsage
}

// Total returns the sum of f's days: the assistant messages and what
// the file spent.
func (f *FileUsage) Total() (messages int, u Usage) {
	for i := range f.Days {
		messages += f.Days[i].Messages
		u.Add(f.Days[i].Usage)
	}
	return messages, u
}

// EntryTime returns the time FileUsage files an entry's usage under: its
// timestamp, else its message's (epoch milliseconds); false for neither.
func EntryTime(en *engine.Entry) (time.Time, bool) {
	if en.Timestamp != "" {
		if t, err := time.Parse(time.RFC3339Nano, en.Timestamp); err == nil {
			return t, true
		}
	}
	if msg := en.Message(); msg != nil {
		if v, ok := jsonl.Lookup(msg, "timestamp"); ok {
			if ms, ok := jsonl.Number(v); ok && ms > 0 {
				return time.UnixMilli(int64(ms)), true
			}
		}
	}
	return time.Time{}, false
}

// ReadFileUsage counts the session file at path as Dir counts each file
// (its entries migrated to version 3), without the stats index: what it
// spent per day and model, up to the size it had when opened. A file in
// the current format is read a line at a time, so that memory is bounded
// by its longest line (one that needs migrating is read whole). A file
// that is not a regular one, has no session header or cannot be
// migrated is an error. fsys nil means vfs.OS().
func ReadFileUsage(fsys vfs.FS, path string) (*FileUsage, error) {
	if fsys == nil {
		fsys = vfs.OS()
	}
	fu, whole, err := streamUsage(fsys, path)
	if err != nil {
		return nil, fmt.Errorf("usage of %s: %w", path, err)
	}
	if !whole {
		return fu, nil
	}
	data, fi, err := vfs.ReadIntoInfo(fsys, path, nil)
	if err != nil {
		return nil, fmt.Errorf("usage of %s: %w", path, err)
	}
	f := countFile(data)
	if f.skip != nil {
		return nil, fmt.Errorf("usage of %s: %w", path, f.skip)
	}
	return f.usageOf(path, fi.Size(), fi.ModTime()), nil
}

// streamUsage is ReadFileUsage a line at a time; whole says the file
// needs migrating, to be read whole instead. Lines are parsed as
// jsonl.ParseFile parses them (blank lines skipped, lines that are not
// objects and a torn last line left out); a line that can spend nothing
// (it names neither "assistant" nor "usage" and has no \u escape that
// could spell them) is not parsed.
func streamUsage(fsys vfs.FS, path string) (fu *FileUsage, whole bool, err error) {
	if fi, err := fsys.Stat(path); err != nil {
		return nil, false, err
	} else if !fi.Mode().IsRegular() {
		return nil, false, vfs.ErrNotRegular
	}
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	if !fi.Mode().IsRegular() {
		return nil, false, vfs.ErrNotRegular
	}
	br := bufio.NewReaderSize(io.LimitReader(f, fi.Size()), 256<<10)
	days := dayCounter{}
	header := false
	var long []byte
	for {
		chunk, rerr := br.ReadSlice('\n')
		if errors.Is(rerr, bufio.ErrBufferFull) {
			long = append(long, chunk...)
			continue
		}
		line := chunk
		if long != nil {
			long = append(long, chunk...)
			line = long
		}
		if !header {
			line = bytes.TrimPrefix(line, []byte("\uFEFF"))
		}
		if line = bytes.TrimSpace(line); len(line) > 0 && (!header || maySpend(line)) {
			en, perr := jsonl.ParseEntry(line)
			switch {
			case perr != nil:
			case !header:
				if !en.IsHeader() || en.IDKind != jsonl.KindString {
					return nil, false, errNoHeader
				}
				if migrate.Needed(migrate.VersionOf(&en)) {
					return nil, true, nil
				}
				header = true
			case en.IsHeader():
			default:
				if sp, ok := EntrySpent(&en); ok {
					days.add(&en, sp)
				}
			}
		}
		long = long[:0]
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return nil, false, rerr
		}
	}
	if !header {
		return nil, false, errNoHeader
	}
	counted := &fileStats{days: days.list()}
	return counted.usageOf(path, fi.Size(), fi.ModTime()), false, nil
}

// maySpend reports whether a line may hold an entry that spent
// something (EntrySpent): one that names neither "assistant" nor
// "usage", with no \u escape to spell them, spent nothing.
func maySpend(line []byte) bool {
	return bytes.Contains(line, []byte(`"assistant"`)) || bytes.Contains(line, []byte(`"usage"`)) || bytes.Contains(line, []byte(`\u`))
}

// unknownQuarter is the quarter of entries without a time.
const unknownQuarter = -1 << 62

// quarter is 15 minutes, in seconds: every time zone's offset is a
// multiple of it.
const quarter = 15 * 60

// dayUse is what a file spent in one quarter of an hour (UTC: its start
// in seconds since the epoch divided by 15 minutes; unknownQuarter for
// entries without a time) with one model.
type dayUse struct {
	quarter  int64
	model    string
	messages int
	usage    Usage
}

// dayCounter gathers a file's dayUses.
type dayCounter map[dayKey]*dayUse

type dayKey struct {
	quarter int64
	model   string
}

// add counts what en spent.
func (c dayCounter) add(en *engine.Entry, sp Spent) {
	q := int64(unknownQuarter)
	if t, ok := EntryTime(en); ok {
		q = floorDiv(t.Unix(), quarter)
	}
	k := dayKey{q, sp.Model}
	d := c[k]
	if d == nil {
		d = &dayUse{quarter: q, model: strings.Clone(sp.Model)}
		c[k] = d
	}
	if sp.Message {
		d.messages++
	}
	d.usage.Add(sp.Usage)
}

// list returns the dayUses, by quarter and model.
func (c dayCounter) list() []dayUse {
	out := make([]dayUse, 0, len(c))
	for _, d := range c {
		out = append(out, *d)
	}
	slices.SortFunc(out, func(a, b dayUse) int {
		return cmp.Or(cmp.Compare(a.quarter, b.quarter), strings.Compare(a.model, b.model))
	})
	return out
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// usageOf returns the FileUsage of a file counted.
func (f *fileStats) usageOf(path string, size int64, mtime time.Time) *FileUsage {
	out := &FileUsage{Path: path, Size: size, ModTime: mtime}
	byDay := map[[2]string]int{}
	for i := range f.days {
		d := &f.days[i]
		day := "unknown"
		if d.quarter != unknownQuarter {
			day = time.Unix(d.quarter*quarter, 0).Local().Format(time.DateOnly)
		}
		k := [2]string{day, d.model}
		j, ok := byDay[k]
		if !ok {
			j = len(out.Days)
			byDay[k] = j
			out.Days = append(out.Days, DayUsage{Day: day, Model: d.model})
		}
		out.Days[j].Messages += d.messages
		out.Days[j].Usage.Add(d.usage)
	}
	slices.SortStableFunc(out.Days, func(a, b DayUsage) int {
		if (a.Day == "unknown") != (b.Day == "unknown") {
			if a.Day == "unknown" {
				return 1
			}
			return -1
		}
		return cmp.Or(strings.Compare(a.Day, b.Day), strings.Compare(a.Model, b.Model))
	})
	return out
}

// encodeDays writes dayUses for the stats index:
// [[quarter,model,messages,<usage>],...], a usage as usageString's
// string ("u" for no time: the quarter is then "u").
func encodeDays(days []dayUse) []byte {
	out := []byte{'['}
	for i, d := range days {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, '[')
		if d.quarter == unknownQuarter {
			out = append(out, `"u"`...)
		} else {
			out = strconv.AppendInt(out, d.quarter, 10)
		}
		out = append(out, ',')
		out = jsonl.AppendString(out, d.model)
		out = append(out, ',')
		out = strconv.AppendInt(out, int64(d.messages), 10)
		out = append(out, ',', '"')
		out = append(out, usageString(d.usage)...)
		out = append(out, '"', ']')
	}
	return append(out, ']')
}

// decodeDays reads what encodeDays wrote.
func decodeDays(v []byte) ([]dayUse, bool) {
	var out []dayUse
	ok := true
	err := jsonl.ElementsTrusted(v, func(dv []byte) bool {
		var d dayUse
		i := 0
		good := true
		_ = jsonl.ElementsTrusted(dv, func(x []byte) bool {
			switch i {
			case 0:
				if bytes.Equal(x, []byte(`"u"`)) {
					d.quarter = unknownQuarter
				} else {
					n, err := strconv.ParseInt(string(x), 10, 64)
					d.quarter, good = n, err == nil
				}
			case 1:
				d.model, good = jsonl.String(x)
			case 2:
				n, err := strconv.Atoi(string(x))
				d.messages, good = n, err == nil
			case 3:
				d.usage, good = parseUsage(x)
			default:
				good = false
			}
			i++
			return good
		})
		if !good || i != 4 {
			ok = false
			return false
		}
		out = append(out, d)
		return true
	})
	return out, ok && err == nil
}
