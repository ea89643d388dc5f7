package textindex

import (
	"os"
	"strconv"
	"testing"
)

// BenchmarkAddToTable tokenizes 24 MB of session-like text into one
// in-memory table (no segment is written): the part of a build that
// looks terms up, in MB per CPU-second.
func BenchmarkAddToTable(b *testing.B) {
	size := int64(24 << 20)
	if s := os.Getenv("TEXTINDEX_BENCH_MB"); s != "" {
		n, _ := strconv.Atoi(s)
		size = int64(n) << 20
	}
	docs, total := docsOf(5, size)
	b.SetBytes(total)
	b.ResetTimer()
	var cpu float64
	for b.Loop() {
		c0 := cpuTime()
		m := newMemTable(32<<20, nil)
		var sc textScratch
		for i := range docs {
			ord := m.addDoc(&docs[i])
			m.doc(int(ord)).tokens = m.addText(docs[i].Text, ord, &sc)
		}
		cpu += (cpuTime() - c0).Seconds()
	}
	b.ReportMetric(float64(total)*float64(b.N)/1e6/cpu, "MB/CPU-s")
}
