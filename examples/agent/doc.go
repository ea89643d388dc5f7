// Command agent is an example agent that keeps its sessions with sessctl's
// typed API, as an agent runtime would, and writes no JSON by hand: it
// opens a store on a directory (engine.OpenStore), creates a session whose
// file is written from the first prompt, appends typed messages (a user prompt, an assistant
// turn with a tool call, the tool's result, the answer), compacts with a
// summary of its own, goes back to an earlier entry leaving a summary of
// the abandoned branch, starts a subagent's child session, resumes the
// most recent session (passing over the child), and follows that session
// with a read-only reader while it is written.
//
// Usage:
//
//	go run ./examples/agent DIR
//
// It writes into DIR (a store opened on a directory: every session file
// goes into DIR itself, as into a pi session directory) and prints the session
// files, one per line; pi loads them with the same answers
// (scripts/pi-interop.sh runs it). The model is played by a function
// here; a real agent calls one, given Context().TypedMessages(), the
// model from Context().CurrentModel() and Context().Thinking().
package main
