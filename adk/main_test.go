package adk

import (
	"os"
	"testing"

	"github.com/sessctl/sessctl/internal/testenv"
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, map[string]func() int{
		"appender": appenderChild,
	}))
}
