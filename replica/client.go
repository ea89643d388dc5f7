package replica

import (
	"context"
	"errors"
	"io"
	"iter"
	"time"
)

// Client is the object store a Remote reads and writes: a flat space of
// keys ("/"-separated, relative to the remote's root: the s3:// prefix,
// or the directory) holding immutable byte strings. NewDirClient and
// package replica/s3's NewClient make the two sessctl provides; a
// program may supply its own (Options.Client, or a Backend in
// Options.Backends), or wrap one (to count, throttle or inject faults).
//
// Every method is safe for concurrent use, also by several processes
// and machines sharing the store. What a write makes visible, it makes
// visible whole: a reader sees the object as it was before or as it is
// after, never part of it. An operation that returns an error may or may
// not have taken effect (a reply can be lost); one that returns nil has,
// durably. Errors name the operation and the object, and wrap
// ErrObjectNotFound, ErrObjectExists, ErrObjectChanged or ErrNoBucket
// where those apply.
type Client interface {
	// Get opens the object for reading and says what it is (Key, Size,
	// ETag and, where the store keeps one, ModTime). The reader yields
	// the Size bytes the object held when Get was called, even if it is
	// replaced or deleted while being read; the caller closes it.
	// ErrObjectNotFound when no object has the key.
	Get(ctx context.Context, key string) (io.ReadCloser, ObjectInfo, error)

	// List yields the objects whose keys start with prefix (a plain
	// string prefix, "" for all), in ascending byte order of their keys,
	// with Key, Size and ModTime; ETag may be empty. An object written
	// or deleted during the listing may or may not be in it. The
	// sequence stops after yielding an error; breaking out of it early
	// releases what it holds.
	List(ctx context.Context, prefix string) iter.Seq2[ObjectInfo, error]

	// Put writes the size bytes of r as the object key, replacing any
	// object there. r must yield at least size bytes (more are not
	// read); when it yields fewer, nothing is written.
	Put(ctx context.Context, key string, r io.Reader, size int64) (ObjectInfo, error)

	// PutIfAbsent is Put only when no object has the key (S3's
	// If-None-Match: *): of several writers creating one key, exactly one
	// succeeds, and the others get ErrObjectExists and leave the object
	// as the winner wrote it. A request retried after its reply was lost
	// (the S3 client retries) can get ErrObjectExists for the object it
	// created itself: read it back where that matters.
	PutIfAbsent(ctx context.Context, key string, r io.Reader, size int64) (ObjectInfo, error)

	// PutIfMatch is Put only when the object's ETag is etag (S3's
	// If-Match), compare-and-swap: ErrObjectChanged when the object holds
	// something else, ErrObjectNotFound when there is none (it is never
	// created). Of several writers replacing one version, at most one
	// succeeds. ETags name content (see ObjectInfo.ETag): an object
	// rewritten with its old bytes matches its old ETag again. As with
	// PutIfAbsent, a retried request can get ErrObjectChanged for its own
	// write.
	PutIfMatch(ctx context.Context, key string, r io.Reader, size int64, etag string) (ObjectInfo, error)

	// Delete removes the object. Deleting a key no object has is not an
	// error.
	Delete(ctx context.Context, key string) error
}

// ObjectInfo describes an object of a Client.
type ObjectInfo struct {
	// Key is the object's key below the remote's root.
	Key string
	// Size is its length in bytes.
	Size int64
	// ETag names the object's content, for PutIfMatch: it changes when
	// the bytes change, and the same bytes written the same way get the
	// same ETag (S3: the MD5 of a single-part upload; the directory
	// client: the SHA-256 of the bytes, in hex). Compare it only with
	// ETags of the same store. Listings may leave it empty.
	ETag string
	// ModTime is when the object was written, as the store records it;
	// zero where the reply did not say (an S3 PUT).
	ModTime time.Time
}

// ErrObjectNotFound is returned (wrapped) by Get and PutIfMatch when no
// object has the key.
var ErrObjectNotFound = errors.New("no such object")

// ErrObjectExists is returned (wrapped) by PutIfAbsent when an object
// has the key already.
var ErrObjectExists = errors.New("the object exists already")

// ErrObjectChanged is returned (wrapped) by PutIfMatch when the object
// does not hold the version the ETag names.
var ErrObjectChanged = errors.New("the object was changed (its ETag does not match)")

// ErrShortBody is returned (wrapped) by the writes of a Client when the
// reader ends before the size given; nothing is written then.
var ErrShortBody = errors.New("the reader ended before the object's size")

// ErrNoBucket is returned (wrapped) when the bucket, or the directory of
// a directory remote, does not exist. Nothing creates it: a push into a
// mistyped or unmounted remote fails instead of starting a new one.
var ErrNoBucket = errors.New("the bucket or directory does not exist")
