//go:build !linux

package search

import "errors"

// watcher is not implemented here: Options.Watch is ignored.
type watcher struct{}

func newWatcher() (*watcher, error) { return nil, errors.New("no directory watch on this system") }

func (w *watcher) generation() uint64 { return 0 }

func (w *watcher) add(string) bool { return false }

func (w *watcher) keep(map[string]bool) {}

func (w *watcher) mark() {}

func (w *watcher) changes() ([]string, bool) { return nil, false }

func (w *watcher) close() error { return nil }
