// Package adk is a session.Service of Google's Agent Development Kit for Go
// (google.golang.org/adk/v2) on sessctl's engine.
package adk
