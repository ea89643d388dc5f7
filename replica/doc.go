// Package replica replicates a sessctl store (pi/indusagi JSONL sessions
// and AgentUse session directories) to S3-compatible object storage, and
// merges what other machines appended back into it.
package replica
