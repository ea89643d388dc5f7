// Package message holds Go types for the messages pi stores in its
// session files: pi-ai's user, assistant and toolResult messages with
// their content blocks (text, image, thinking, toolCall), usage and cost,
// and pi's own bashExecution, custom, branchSummary and compactionSummary
// messages.
//
// Every type encodes to the bytes JSON.stringify writes for the object pi
// builds (its keys in pi's order, compact, no HTML escaping, JavaScript
// number formatting), so a message built here and appended with
// engine.Session.AppendMessage is the line pi would have written.
//
// Decode reads what pi (or a newer pi) wrote. Members a type has no field
// for, and members whose value does not fit the field (a null exitCode, a
// fractional token count, a string holding a lone surrogate), are kept as
// their JSON in Fields, and the order the members were read in is kept
// too: encoding a decoded message writes JSON.stringify(JSON.parse(raw)),
// the same bytes for anything pi wrote, with the caller's changes in
// place. Optional members (errorMessage, details, textSignature, exitCode,
// ...) are written when they were read or when they are set; required
// ones always, except that a decoded message missing one does not gain it
// unless it is set.
//
// MarshalJSON returns those bytes. encoding/json.Marshal re-escapes <, >
// and & in them; use Encode (or AppendMessage) for pi's exact bytes.
// AppendJSON appends them in the form a session line holds them
// (the canonical form of Encode's bytes: the same bytes but where keys
// that are not UTF-8 meet), encoding straight into the caller's buffer: it is
// what AppendMessage writes.
package message
