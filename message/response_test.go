package message_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sessctl/sessctl/message"
)

// pi-ai 0.73's assistant messages may carry responseModel, responseId and
// diagnostics, which its providers add after building the message (so
// after timestamp). They decode into the typed fields and survive a
// read-modify-write byte for byte, in the order they were read.
func TestAssistantResponseFields(t *testing.T) {
	t.Parallel()
	const in = `{"role":"assistant","content":[{"type":"text","text":"a"}],"api":"openai-completions","provider":"openrouter","model":"m","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1,"responseId":"gen-1","responseModel":"m-2026-01-01","diagnostics":[{"type":"provider_transport_failure","timestamp":2,"error":{"name":"Error","message":"socket hang up","stack":"Error: socket hang up\n    at x","code":"ECONNRESET"},"details":{"attempt":1}},{"type":"other","timestamp":3,"error":{"message":"m","code":429,"extra":true}}]}`
	m, err := message.Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	a := m.(*message.Assistant)
	type view struct {
		ResponseModel, ResponseID string
		Types                     []string
		Timestamps                []int64
		Names, Messages, Stacks   []string
		Codes, Details            []string
	}
	got := view{ResponseModel: a.ResponseModel, ResponseID: a.ResponseID}
	for _, d := range a.Diagnostics {
		got.Types = append(got.Types, d.Type)
		got.Timestamps = append(got.Timestamps, d.Timestamp)
		got.Names = append(got.Names, d.Error.Name)
		got.Messages = append(got.Messages, d.Error.Message)
		got.Stacks = append(got.Stacks, d.Error.Stack)
		code, _ := d.Error.Code.(json.RawMessage)
		got.Codes = append(got.Codes, string(code))
		details, _ := d.Details.(json.RawMessage)
		got.Details = append(got.Details, string(details))
	}
	want := view{ResponseModel: "m-2026-01-01", ResponseID: "gen-1",
		Types: []string{"provider_transport_failure", "other"}, Timestamps: []int64{2, 3},
		Names: []string{"Error", ""}, Messages: []string{"socket hang up", "m"}, Stacks: []string{"Error: socket hang up\n    at x", ""},
		Codes: []string{`"ECONNRESET"`, `429`}, Details: []string{`{"attempt":1}`, ""}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("typed fields (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(in, encode(t, a)); diff != "" {
		t.Errorf("re-encoded (-read +written):\n%s", diff)
	}
	if v, ok := a.Diagnostics[1].Error.Extra("extra"); !ok || string(v) != "true" {
		t.Errorf("an unknown member of a diagnostic's error: %s, %v", v, ok)
	}
	// A change elsewhere, and to the new fields, keeps everything else.
	a.Content[0].(*message.TextContent).Text = "b"
	a.ResponseID = "gen-2"
	a.Diagnostics[0].Error.Message = "reset"
	wantOut := `{"role":"assistant","content":[{"type":"text","text":"b"}],"api":"openai-completions","provider":"openrouter","model":"m","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1,"responseId":"gen-2","responseModel":"m-2026-01-01","diagnostics":[{"type":"provider_transport_failure","timestamp":2,"error":{"name":"Error","message":"reset","stack":"Error: socket hang up\n    at x","code":"ECONNRESET"},"details":{"attempt":1}},{"type":"other","timestamp":3,"error":{"message":"m","code":429,"extra":true}}]}`
	if diff := cmp.Diff(wantOut, encode(t, a)); diff != "" {
		t.Errorf("after a change (-want +got):\n%s", diff)
	}
	// Diagnostics that are not objects stay as they were read.
	odd := `{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1,"diagnostics":["x",1]}`
	m, err = message.Decode([]byte(odd))
	if err != nil {
		t.Fatal(err)
	}
	if a := m.(*message.Assistant); a.Diagnostics != nil || encode(t, a) != odd {
		t.Errorf("odd diagnostics: %v, %s", a.Diagnostics, encode(t, a))
	}
}

// A constructed assistant message with the new fields writes them after
// model, in pi-ai's AssistantMessage order.
func TestAssistantResponseFieldsConstructed(t *testing.T) {
	t.Parallel()
	a := message.NewAssistant("anthropic-messages", "anthropic", "claude", []message.Block{message.NewText("hi")}, message.Usage{}, message.StopStop, at)
	a.ResponseID = "msg_1"
	a.ResponseModel = "claude-2026"
	a.Diagnostics = []message.Diagnostic{{Type: "provider_transport_failure", Timestamp: 5, Error: message.DiagnosticError{Name: "Error", Message: "x", Code: "E"}, Details: map[string]int{"attempt": 2}}}
	want := `{"role":"assistant","content":[{"type":"text","text":"hi"}],"api":"anthropic-messages","provider":"anthropic","model":"claude","responseModel":"claude-2026","responseId":"msg_1","diagnostics":[{"type":"provider_transport_failure","timestamp":5,"error":{"name":"Error","message":"x","code":"E"},"details":{"attempt":2}}],"usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1772442003123}`
	if diff := cmp.Diff(want, encode(t, a)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	var buf []byte
	buf, err := message.AppendJSON(buf, a)
	if err != nil || string(buf) != want {
		t.Errorf("AppendJSON = %s, %v", buf, err)
	}
}
