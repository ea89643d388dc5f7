package lock_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/sessctl/sessctl/lock"
)

func ExampleAcquire() {
	dir, err := os.MkdirTemp("", "lock-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "session.jsonl.lock")

	l, err := lock.Acquire(context.Background(), path, lock.Options{Command: "pi"})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()

	// A second writer fails at once and learns who holds the session.
	_, err = lock.Acquire(context.Background(), path, lock.Options{})
	fmt.Println(errors.Is(err, lock.ErrLocked))
	if le, ok := errors.AsType[*lock.LockedError](err); ok {
		fmt.Println(le.Self, le.Owner.Command)
	}
	// Output:
	// true
	// true pi
}

func ExampleInspect() {
	dir, err := os.MkdirTemp("", "lock-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "session.jsonl.lock")

	st, err := lock.Inspect(path)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("locked:", st.Locked)

	l, err := lock.Acquire(context.Background(), path, lock.Options{Mode: "migrate"})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	if st, err = lock.Inspect(path); err != nil {
		log.Fatal(err)
	}
	fmt.Println("locked:", st.Locked, "mode:", st.Owner.Mode)
	// Output:
	// locked: false
	// locked: true mode: migrate
}
