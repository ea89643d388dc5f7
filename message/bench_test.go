package message_test

import (
	"testing"
	"time"

	"github.com/sessctl/sessctl/message"
)

// benchMessages are the assistant and user messages of
// cmd/sessctl-bench (pi-bench.mjs's): a reply with thinking, text and
// a tool call whose arguments are a struct, and a plain user prompt.
func benchMessages() []message.Message {
	type editArgs struct {
		Path    string `json:"path"`
		OldText string `json:"oldText"`
		NewText string `json:"newText"`
	}
	user := message.NewUser("Run the tests again and tell me which package fails, and why; then propose the smallest fix that keeps the public API as it is.", time.UnixMilli(1772355600000))
	assistant := message.NewAssistant("anthropic-messages", "anthropic", "claude-sonnet-4-5", []message.Block{
		message.NewThinking("The failing package is layout: codec.go uses utf16 without importing it. The smallest fix adds the import."),
		message.NewText("layout fails to build: codec.go calls utf16.Encode but does not import unicode/utf16. Adding the import fixes it; nothing else changes."),
		message.NewToolCall("toolu_01", "edit", editArgs{Path: "layout/codec.go", OldText: "import (", NewText: "import (\n\t\"unicode/utf16\""}),
	}, message.NewUsage(12040, 180, 8000, 0, message.Cost{Input: 0.03612, Output: 0.0027, CacheRead: 0.0024, CacheWrite: 0, Total: 0.04122}),
		message.StopToolUse, time.UnixMilli(1772355601000))
	return []message.Message{assistant, user}
}

// BenchmarkEncode encodes the benchmark messages with Encode (a new
// slice each).
func BenchmarkEncode(b *testing.B) {
	for _, m := range benchMessages() {
		b.Run(m.Role(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := message.Encode(m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAppendJSON encodes the benchmark messages with AppendJSON into
// one reused buffer, as AppendMessage encodes into its line.
func BenchmarkAppendJSON(b *testing.B) {
	for _, m := range benchMessages() {
		b.Run(m.Role(), func(b *testing.B) {
			b.ReportAllocs()
			var buf []byte
			for b.Loop() {
				var err error
				if buf, err = message.AppendJSON(buf[:0], m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
