package render_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/engine/render"
	"github.com/sessctl/sessctl/message"
	"github.com/sessctl/sessctl/redact"
)

func share(w io.Writer, s *engine.Session) error {
	return render.Markdown(w, render.Snapshot(s), s.BranchPath(""), render.Options{Redactor: redact.Rules{}})
}

func ExampleMarkdown() {
	n := 0
	st, _ := engine.OpenStore(context.Background(), engine.StoreOptions{
		Dir:          os.TempDir(),
		NewEntryID:   func() string { n++; return fmt.Sprintf("e%07d", n) },
		NewSessionID: func() string { return "5e55-0001" },
		Now:          func() time.Time { return time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC) },
	})
	s, _ := st.Create(context.Background(), "/work", engine.CreateOptions{InMemory: true})
	s.AppendMessage(message.NewUser("deploy with token=abc123", time.UnixMilli(1772355600000)))
	if err := share(os.Stdout, s); err != nil {
		fmt.Println(err)
	}
	// Output:
	// # deploy with token=[REDACTED]
	//
	// - **Session:** `5e55-0001`
	// - **Working directory:** `/work`
	// - **Created:** 2026-03-01T09:00:00.000Z
	// - **Leaf:** `e0000001`
	// - **Entries:** 1 on this branch, 1 in the file
	//
	// ---
	//
	// ## User · `e0000001` · 2026-03-01 09:00:00
	//
	// deploy with token=[REDACTED]
}
