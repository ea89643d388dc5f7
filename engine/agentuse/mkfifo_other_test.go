//go:build !unix

package agentuse_test

import "errors"

// mkfifo reports that there are no named pipes to make here.
func mkfifo(string) error { return errors.ErrUnsupported }
