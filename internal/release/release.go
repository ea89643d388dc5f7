// Package release names the sessctl release a tree is: the version, kept
// in the tree itself so that every clone and every build knows it (tags
// do not reach every clone, nor a build from a source archive).
//
// At a release, Version becomes the new version and Dev false in the
// release's commit; the commit after it sets Dev back to true. A test
// holds Version to the newest release in CHANGELOG.md and api/.
package release

// Version is the newest release this tree is or comes after, without
// the leading "v".
const Version = "0.1.0"

// Dev is true in every commit but a release's: the tree holds changes
// made after Version.
const Dev = true
