package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/layout"
)

// TestAppendThroughFSSeam appends through a filesystem other than the OS
// one. The append path checks that the file is still the one it opened;
// with os.SameFile that check failed for every FileInfo the os package did
// not make, so no session on a CrashFS could take a second line.
func TestAppendThroughFSSeam(t *testing.T) {
	cases := []struct {
		name    string
		meddle  func(t *testing.T, fsys layout.FS, file string)
		wantErr error
	}{
		{name: "untouched file", meddle: func(*testing.T, layout.FS, string) {}},
		{name: "file replaced behind the writer", wantErr: engine.ErrVanished,
			meddle: func(t *testing.T, fsys layout.FS, file string) {
				data, err := fsys.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				if err := layout.WriteFileAtomic(fsys, file, data, layout.FileMode); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "file removed behind the writer", wantErr: engine.ErrVanished,
			meddle: func(t *testing.T, fsys layout.FS, file string) {
				if err := fsys.Remove(file); err != nil {
					t.Fatal(err)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fsys := layout.NewCrashFS()
			clock := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
			opts := engine.Options{FS: fsys, Dir: "/sessions", NoLock: true,
				Now: func() time.Time { clock = clock.Add(time.Second); return clock }}
			s, err := engine.Create(t.Context(), "/work", opts)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.AppendMessage(map[string]any{"role": "assistant", "content": "first"}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.AppendMessage(map[string]any{"role": "user", "content": "second"}); err != nil {
				t.Fatal(err)
			}
			tc.meddle(t, fsys, s.SessionFile())
			_, err = s.AppendMessage(map[string]any{"role": "user", "content": "third"})
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("third append: got %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr != nil {
				return
			}
			r, err := engine.Open(context.Background(), s.SessionFile(), engine.Options{FS: fsys, ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var got []string
			for _, e := range r.Entries() {
				msg, _ := e.Field("message")
				c, _ := layout.Lookup(msg, "content")
				s, _ := layout.String(c)
				got = append(got, s)
			}
			if diff := cmp.Diff([]string{"first", "second", "third"}, got); diff != "" {
				t.Errorf("entries on disk (-want +got):\n%s", diff)
			}
		})
	}
}
