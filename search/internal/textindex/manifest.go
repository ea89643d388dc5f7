package textindex

import (
	"bytes"
	"fmt"
	"strings"
)

// ManifestName is the name of the manifest file in the index directory.
// It lists the segments of the index, oldest first, and is replaced
// atomically (vfs.WriteFileAtomic) by every commit and merge, so that
// after a crash the index is the one of the last manifest written whole.
//
// It is text: a first line "textindex 1", then "gen N" (a count of
// commits), "next N" (the sequence number of the next segment file),
// one line "seg NAME SIZE SUM DOCS MINID MAXID" per segment, and a last
// line "crc X", the CRC32C (hex) of everything before it.
const ManifestName = "MANIFEST"

const manifestHead = "textindex 1"

type segInfo struct {
	name         string
	size         int64
	sum          uint32
	docs         int64
	minID, maxID uint64
}

type manifest struct {
	gen, next uint64
	segs      []segInfo
}

func (m *manifest) encode() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\ngen %d\nnext %d\n", manifestHead, m.gen, m.next)
	for _, s := range m.segs {
		fmt.Fprintf(&b, "seg %s %d %08x %d %d %d\n", s.name, s.size, s.sum, s.docs, s.minID, s.maxID)
	}
	fmt.Fprintf(&b, "crc %08x\n", crc32c(b.Bytes()))
	return b.Bytes()
}

func decodeManifest(path string, data []byte) (manifest, error) {
	var m manifest
	bad := func(why string) (manifest, error) { return manifest{}, corruptf("manifest %s: %s", path, why) }
	body, last, ok := cutLastLine(data)
	if !ok || !strings.HasPrefix(last, "crc ") {
		return bad("no checksum line")
	}
	if last[4:] != fmt.Sprintf("%08x", crc32c(body)) {
		return bad("checksum mismatch")
	}
	lines := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
	if len(lines) < 3 || lines[0] != manifestHead {
		return bad("not a text index manifest of this version")
	}
	if _, err := fmt.Sscanf(lines[1], "gen %d", &m.gen); err != nil {
		return bad("bad gen line")
	}
	if _, err := fmt.Sscanf(lines[2], "next %d", &m.next); err != nil {
		return bad("bad next line")
	}
	for _, l := range lines[3:] {
		var s segInfo
		if _, err := fmt.Sscanf(l, "seg %s %d %x %d %d %d", &s.name, &s.size, &s.sum, &s.docs, &s.minID, &s.maxID); err != nil {
			return bad("bad segment line")
		}
		if strings.ContainsAny(s.name, `/\`) || s.name == ".." || s.name == "." || s.docs <= 0 || s.minID > s.maxID {
			return bad("bad segment line")
		}
		if n := len(m.segs); n > 0 && m.segs[n-1].maxID >= s.minID {
			return bad("segments out of order")
		}
		m.segs = append(m.segs, s)
	}
	return m, nil
}

// cutLastLine splits data before its last line (which must end in \n).
func cutLastLine(data []byte) ([]byte, string, bool) {
	if len(data) == 0 || data[len(data)-1] != '\n' {
		return nil, "", false
	}
	i := bytes.LastIndexByte(data[:len(data)-1], '\n')
	return data[:i+1], string(data[i+1 : len(data)-1]), true
}

func segName(seq uint64) string { return fmt.Sprintf("%016x.seg", seq) }
