package adk

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/glebarez/sqlite"
	"github.com/sessctl/sessctl/engine"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/session/database"
	"google.golang.org/genai"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// benchSessions is the number of sessions BenchmarkList lists
// (SESSCTL_ADK_BENCH_SESSIONS, default 10,000).
func benchSessions() int {
	if n, err := strconv.Atoi(os.Getenv("SESSCTL_ADK_BENCH_SESSIONS")); err == nil && n > 0 {
		return n
	}
	return 10000
}

// populate creates n sessions of one user, each with a prompt and an
// answer.
func populate(b *testing.B, s session.Service, n int) {
	ctx := context.Background()
	for i := range n {
		c, err := s.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", State: map[string]any{"i": float64(i)}})
		if err != nil {
			b.Fatal(err)
		}
		for j, role := range []string{"user", "model"} {
			ev := session.NewEvent(ctx, "inv")
			ev.Author = role
			ev.Content = genai.NewContentFromText(fmt.Sprintf("message %d of session %d", j, i), genai.Role(role))
			if err := s.AppendEvent(ctx, c.Session, ev); err != nil {
				b.Fatal(err)
			}
		}
		if ss, ok := s.(*Service); ok {
			if err := ss.Release("app", "u", c.Session.ID()); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkList lists one user's 10,000 sessions (each a prompt and an
// answer): through the adapter, sessctl's listing from its list index (one
// stat per file, no file read), and through ADK's own database service on
// SQLite (a file, the same sessions) for comparison. The first listing,
// which builds the index, is reported apart (first-list-ms); the timed
// ones find it. SESSCTL_ADK_BENCH_DIR keeps the generated stores (they
// take minutes to make) for the next run.
func BenchmarkList(b *testing.B) {
	n := benchSessions()
	dir := os.Getenv("SESSCTL_ADK_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	dir = filepath.Join(dir, strconv.Itoa(n))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	list := func(b *testing.B, s session.Service) {
		ls := func() {
			got, err := s.List(context.Background(), &session.ListRequest{AppName: "app", UserID: "u"})
			if err != nil {
				b.Fatal(err)
			}
			if len(got.Sessions) != n {
				b.Fatalf("listed %d sessions, want %d", len(got.Sessions), n)
			}
		}
		start := time.Now()
		ls()
		first := time.Since(start)
		for b.Loop() {
			ls()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/session")
		b.ReportMetric(float64(first.Microseconds())/1000, "first-list-ms")
	}
	// With b.Loop a benchmark function runs once: making the sessions
	// in it is not timed.
	b.Run(fmt.Sprintf("sessctl/sessions=%d", n), func(b *testing.B) {
		s, err := New(context.Background(), Options{
			Store:    engine.StoreOptions{Dir: filepath.Join(dir, "sessions"), CacheDir: filepath.Join(dir, "cache"), Sync: engine.SyncNone},
			StateDir: filepath.Join(dir, "state"),
			Cwd:      dir,
		})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		once(b, filepath.Join(dir, "sessctl.done"), func() { populate(b, s, n) })
		list(b, s)
	})
	b.Run(fmt.Sprintf("adk-database-sqlite/sessions=%d", n), func(b *testing.B) {
		db, err := database.NewSessionService(sqlite.Open(filepath.Join(dir, "adk.db")), &gorm.Config{Logger: logger.Discard})
		if err != nil {
			b.Fatal(err)
		}
		if err := database.AutoMigrate(db); err != nil {
			b.Fatal(err)
		}
		once(b, filepath.Join(dir, "db.done"), func() { populate(b, db, n) })
		list(b, db)
	})
}

// once runs make unless the marker file exists, and makes the marker.
func once(b *testing.B, marker string, make func()) {
	if _, err := os.Stat(marker); err == nil {
		return
	}
	make()
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		b.Fatal(err)
	}
}
