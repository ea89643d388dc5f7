package lock

import (
	"os"
	"testing"

	"github.com/sessctl/sessctl/internal/testenv"
)

// TestMain runs the tests, or one of the helper processes they start
// (helper_test.go).
func TestMain(m *testing.M) { os.Exit(testenv.Main(m, helpers)) }
