package redact_test

import (
	"fmt"

	"github.com/sessctl/sessctl/redact"
)

func ExampleLine() {
	masked, err := share([]byte(`{"type":"message","id":"a1","parentId":null,"message":{"role":"user","content":"token=abc123"}}`))
	fmt.Println(string(masked), err)
	// Output: {"type":"message","id":"a1","parentId":null,"message":{"role":"user","content":"token=[REDACTED]"}} <nil>
}

func share(line []byte) ([]byte, error) {
	masked, err := redact.Line(line)
	if err != nil {
		return nil, err // never fall back to the unmasked line
	}
	return masked, nil
}
