package engine_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessctl/sessctl/compaction"
	"github.com/sessctl/sessctl/engine"
	"github.com/sessctl/sessctl/message"
)

// agent is the minimal agent of the package documentation, which shows
// its code: TestDocExamples checks that the two stay the same.
func agent(ctx context.Context, st *engine.Store, cwd string, reply *message.Assistant) error {
	s, err := st.Create(ctx, cwd, engine.CreateOptions{})
	if err != nil {
		return err
	}
	defer s.Close()
	s.AppendModelChange("anthropic", "claude-sonnet-4-5")
	s.AppendMessage(message.NewUser("hi", time.Now()))
	if _, err := s.AppendMessage(reply); err != nil { // the file appears now (pi's rule)
		return err
	}
	next := s.Context() // what to send to the model next
	model, _ := next.CurrentModel()
	fmt.Println(len(next.Messages), "messages for", model.Provider, model.ModelID)
	return nil
}

func Example() {
	dir, err := os.MkdirTemp("", "engine-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	st, err := engine.OpenStore(ctx, engine.StoreOptions{Dir: dir}) // StoreOptions{}: pi's store
	if err != nil {
		log.Fatal(err)
	}
	if err := agent(ctx, st, "/home/dev/project", answer("Hello.")); err != nil {
		log.Fatal(err)
	}
	// Output: 2 messages for anthropic claude-sonnet-4-5
}

// exampleStore opens a store on a new temporary directory with a fixed
// clock and counted entry ids, so that the examples print the same every
// time; the directory goes when done is called.
func exampleStore() (st *engine.Store, done func()) {
	dir, err := os.MkdirTemp("", "engine-example")
	if err != nil {
		log.Fatal(err)
	}
	n := 0
	st, err = engine.OpenStore(context.Background(), engine.StoreOptions{
		Dir:        dir,
		Now:        func() time.Time { return time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC) },
		NewEntryID: func() string { n++; return fmt.Sprintf("e%07d", n) },
	})
	if err != nil {
		log.Fatal(err)
	}
	return st, func() { os.RemoveAll(dir) }
}

// answer is an assistant message with text.
func answer(text string) *message.Assistant {
	return message.NewAssistant("anthropic-messages", "anthropic", "claude-sonnet-4-5",
		[]message.Block{message.NewText(text)}, message.Usage{}, message.StopStop, time.UnixMilli(1772355600000))
}

// exists reports whether a file exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// A new session's file appears with its first user or assistant message, as in
// pi; with WriteAtOnce, at its first append, synced.
func ExampleStore_Create() {
	st, done := exampleStore()
	defer done()
	ctx := context.Background()
	for _, once := range []bool{false, true} {
		s, err := st.Create(ctx, "/home/dev/project", engine.CreateOptions{WriteAtOnce: once})
		if err != nil {
			log.Fatal(err)
		}
		s.AppendModelChange("anthropic", "claude-sonnet-4-5")
		fmt.Printf("WriteAtOnce %v: the file after the setup: %v\n", once, exists(s.SessionFile()))
		s.AppendMessage(message.NewUser("Why does the build fail?", time.Now()))
		fmt.Printf("WriteAtOnce %v: the file after the prompt: %v\n", once, exists(s.SessionFile()))
		s.Close()
	}
	// Output:
	// WriteAtOnce false: the file after the setup: false
	// WriteAtOnce false: the file after the prompt: true
	// WriteAtOnce true: the file after the setup: true
	// WriteAtOnce true: the file after the prompt: true
}

// Messages are appended as Go values; a message entry read back decodes
// to one with message.Decode. What is not a message pi knows is refused.
func ExampleSession_AppendMessage() {
	st, done := exampleStore()
	defer done()
	s, err := st.Create(context.Background(), "/home/dev/project", engine.CreateOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	id, _ := s.AppendMessage(message.NewUser("Why does the build fail?", time.UnixMilli(1772355600000)))
	e, _ := s.Entry(id)
	m, err := message.Decode(e.Message()) // the entry's message, typed
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(id, m.Role(), m.(*message.User).Content.String())
	_, err = s.AppendMessage(&message.Unknown{Raw: []byte(`"not an object"`)})
	fmt.Println(err)
	// Output:
	// e0000001 user Why does the build fail?
	// append message: the message is not a JSON object: "not an object"
}

// Context is what to send to the model next: the messages of the active
// branch (typed), the model and the thinking level.
func ExampleSession_Context() {
	st, done := exampleStore()
	defer done()
	s, err := st.Create(context.Background(), "/home/dev/project", engine.CreateOptions{InMemory: true})
	if err != nil {
		log.Fatal(err)
	}
	s.AppendModelChange("anthropic", "claude-sonnet-4-5")
	s.AppendThinkingLevelChange("medium")
	s.AppendMessage(message.NewUser("Why does the build fail?", time.Now()))
	s.AppendMessage(answer("A missing import."))
	c := s.Context()
	msgs, err := c.TypedMessages()
	if err != nil {
		log.Fatal(err)
	}
	model, _ := c.CurrentModel()
	for _, m := range msgs {
		fmt.Print(m.Role(), " ")
	}
	fmt.Println("|", model.ModelID, c.Thinking())
	// Output: user assistant | claude-sonnet-4-5 medium
}

// A reader follows a session another process (here another Session)
// writes, read-only and without a lock.
func ExampleSession_Follow() {
	st, done := exampleStore()
	defer done()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w, err := st.Create(ctx, "/home/dev/project", engine.CreateOptions{WriteAtOnce: true})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
	w.AppendMessage(message.NewUser("Why does the build fail?", time.Now()))
	viewer, err := st.Open(ctx, w.SessionFile(), engine.OpenOptions{ReadOnly: true})
	if err != nil {
		log.Fatal(err)
	}
	defer viewer.Close()
	w.AppendMessage(answer("A missing import."))
	w.AppendSessionInfo("build failure")
	seen := 0
	for e, err := range viewer.Follow(ctx, 10*time.Millisecond) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("appended:", e.Type)
		if seen++; seen == 2 {
			break
		}
	}
	name, _ := viewer.Name()
	fmt.Println("name:", name)
	// Output:
	// appended: message
	// appended: session_info
	// name: build failure
}

// A subagent's session names its parent's file as its parentSession.
func ExampleSession_NewChild() {
	st, done := exampleStore()
	defer done()
	ctx := context.Background()
	s, err := st.Create(ctx, "/home/dev/project", engine.CreateOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	s.AppendMessage(message.NewUser("Review the patch.", time.Now()))
	s.AppendMessage(answer("Starting a reviewer."))
	child, err := s.NewChild(ctx, engine.ChildOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer child.Close()
	fmt.Println(child.Header().ParentSession == s.SessionFile(), filepath.Dir(child.SessionFile()) == filepath.Dir(s.SessionFile()))
	// Output: true true
}

// An agent resumes the session it wrote last in a cwd; a new one is
// created when there is none.
func ExampleStore_ContinueRecent() {
	st, done := exampleStore()
	defer done()
	ctx := context.Background()
	s, err := st.Create(ctx, "/home/dev/project", engine.CreateOptions{})
	if err != nil {
		log.Fatal(err)
	}
	s.AppendMessage(message.NewUser("Why does the build fail?", time.Now()))
	s.AppendMessage(answer("A missing import."))
	file := s.SessionFile()
	s.Close()

	r, err := st.ContinueRecent(ctx, "/home/dev/project", engine.OpenOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	leaf, _ := r.LeafID()
	fmt.Println(r.SessionFile() == file, len(r.Entries()), leaf)
	// Output: true 2 e0000002
}

// Compaction replaces the older part of the active branch with a summary
// in the model context: prepare it on the branch, finish it with a
// summary (your own here, or compaction.Compact with a Summarizer), and
// append it.
func ExampleSession_AppendCompaction() {
	st, done := exampleStore()
	defer done()
	s, err := st.Create(context.Background(), "/home/dev/project", engine.CreateOptions{InMemory: true})
	if err != nil {
		log.Fatal(err)
	}
	for _, q := range []string{"Why does the build fail?", "Fix it.", "Add a test."} {
		s.AppendMessage(message.NewUser(q+strings.Repeat(" Some context.", 40), time.Now()))
		s.AppendMessage(answer("Done."))
	}
	// Keep about the last turn's tokens; summarise the rest.
	prep, err := compaction.Prepare(s.BranchPath(""), compaction.Settings{ReserveTokens: 16384, KeepRecentTokens: 100})
	if err != nil {
		log.Fatal(err)
	}
	res := compaction.FinishSummary(prep, "The build failed for a missing import; it is fixed.")
	if _, err := s.AppendCompaction(engine.Compaction{Summary: res.Summary, FirstKeptEntryID: res.FirstKeptEntryID,
		TokensBefore: res.TokensBefore, Details: res.Details}); err != nil {
		log.Fatal(err)
	}
	msgs, _ := s.Context().TypedMessages()
	for _, m := range msgs {
		fmt.Print(m.Role(), " ")
	}
	fmt.Println()
	// Output: compactionSummary user assistant
}

// Going back to an earlier entry with a summary of the abandoned branch:
// the summary is the new leaf, so the move survives a reload.
func ExampleSession_BranchWithSummary() {
	st, done := exampleStore()
	defer done()
	s, err := st.Create(context.Background(), "/home/dev/project", engine.CreateOptions{InMemory: true})
	if err != nil {
		log.Fatal(err)
	}
	s.AppendMessage(message.NewUser("Why does the build fail?", time.Now()))
	first, _ := s.AppendMessage(answer("A missing import."))
	s.AppendMessage(message.NewUser("Try a vendored copy.", time.Now()))
	s.AppendMessage(answer("That breaks the module cache."))
	leaf, err := s.BranchWithSummary(engine.BranchSummary{FromID: first, Summary: "Vendoring was tried; it broke the module cache."})
	if err != nil {
		log.Fatal(err)
	}
	msgs, _ := s.Context().TypedMessages()
	for _, m := range msgs {
		fmt.Print(m.Role(), " ")
	}
	fmt.Println("| parent of the leaf:", s.BranchPath(leaf)[1].ID == first)
	// Output: user assistant branchSummary | parent of the leaf: true
}

// A listing names each session by its header's id and a child by the
// file of the session it came from, as plain strings.
func ExampleStore_List() {
	st, done := exampleStore()
	defer done()
	ctx := context.Background()
	s, err := st.Create(ctx, "/home/dev/project", engine.CreateOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	s.AppendMessage(message.NewUser("Review the patch.", time.Now()))
	s.AppendMessage(answer("Starting a reviewer."))
	child, err := s.NewChild(ctx, engine.ChildOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer child.Close()
	child.AppendMessage(message.NewUser("Read the diff.", time.Now()))
	child.AppendMessage(answer("Reading."))

	infos, err := st.List(ctx, "/home/dev/project", engine.ListOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, in := range infos {
		id := in.ID
		switch {
		case id == s.SessionID():
			fmt.Printf("session: %q, no parent: %t\n", in.FirstMessage, in.ParentSessionPath == "")
		case id == child.SessionID():
			fmt.Printf("child: %q, parent is the session's file: %t\n", in.FirstMessage, in.ParentSessionPath == s.SessionFile())
		}
	}
	// Unordered output:
	// session: "Review the patch.", no parent: true
	// child: "Read the diff.", parent is the session's file: true
}
