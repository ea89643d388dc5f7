module github.com/sessctl/sessctl

go 1.26

require (
	github.com/gofrs/flock v0.13.1
	github.com/google/go-cmp v0.7.0
	github.com/oklog/ulid/v2 v2.1.2
)

require golang.org/x/sys v0.47.0 // indirect
