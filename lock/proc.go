package lock

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// procStat is what lock needs from /proc/<pid>/stat.
type procStat struct {
	State     byte   // field 3: R, S, D, Z, ...
	StartTime uint64 // field 22: clock ticks since boot
}

// parseProcStat parses the contents of /proc/<pid>/stat. The second field,
// comm, is the executable name in parentheses and may itself contain spaces
// and parentheses, so the fields are counted from after the last ')'.
func parseProcStat(data []byte) (procStat, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procStat{}, errors.New("no ')' after the command name")
	}
	// After ')' come fields 3, 4, ...; field 22 is at index 19.
	fields := bytes.Fields(data[i+1:])
	const startField = 22 - 3
	if len(fields) <= startField {
		return procStat{}, fmt.Errorf("%d fields after the command name, want at least %d", len(fields), startField+1)
	}
	if len(fields[0]) != 1 {
		return procStat{}, fmt.Errorf("state field %q is not one character", fields[0])
	}
	start, err := strconv.ParseUint(string(fields[startField]), 10, 64)
	if err != nil {
		return procStat{}, fmt.Errorf("start time field: %w", err)
	}
	return procStat{State: fields[0][0], StartTime: start}, nil
}
