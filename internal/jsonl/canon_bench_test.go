package jsonl

import (
	"strings"
	"testing"
)

var benchAssistant = []byte(`{"role":"assistant","content":[{"type":"thinking","thinking":"The failing package is layout: codec.go uses utf16 without importing it. The smallest fix adds the import."},{"type":"text","text":"layout fails to build: codec.go calls utf16.Encode but does not import unicode/utf16. Adding the import fixes it; nothing else changes."},{"type":"toolCall","id":"toolu_01","name":"edit","arguments":{"path":"layout/codec.go","oldText":"import (","newText":"import (\n\t\"unicode/utf16\""}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":12040,"output":180,"cacheRead":8000,"cacheWrite":0,"totalTokens":20220,"cost":{"input":0.03612,"output":0.0027,"cacheRead":0.0024,"cacheWrite":0,"total":0.04122}},"stopReason":"toolUse","timestamp":1772355601000}`)

// BenchmarkIsCanonical checks a typical assistant message, the cost every
// append pays to prove caller data needs no re-encoding.
func BenchmarkIsCanonical(b *testing.B) {
	b.SetBytes(int64(len(benchAssistant)))
	for b.Loop() {
		if !isCanonical(benchAssistant) {
			b.Fatal("not canonical")
		}
	}
}

// BenchmarkIsCanonicalCJK checks a line of Japanese text with a newline
// escape every 51 bytes: bytes >= 0x80 every three bytes, where the
// canonical check must not start a block scan at each one.
func BenchmarkIsCanonicalCJK(b *testing.B) {
	line := []byte(`{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-03-01T09:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"` +
		strings.Repeat(`日本語のテキストです。漢字とかなが\n`, 200) + `"}]}}`)
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if !isCanonical(line) {
			b.Fatal("not canonical")
		}
	}
}
