// Package clienttest is the conformance test every replica.Client
// passes: the directory client's in package replica, the S3 client's in
// replica/s3. It is test support, imported by tests only.
package clienttest
