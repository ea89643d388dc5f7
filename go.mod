module github.com/sessctl/sessctl

go 1.26

require (
	filippo.io/age v1.3.1
	github.com/gofrs/flock v0.13.1
	github.com/google/go-cmp v0.7.0
	github.com/klauspost/compress v1.18.0
	github.com/minio/minio-go/v7 v7.0.91
	github.com/oklog/ulid/v2 v2.1.2
	golang.org/x/sys v0.47.0
	modernc.org/sqlite v1.59.0
)

require (
	filippo.io/hpke v0.4.0 // indirect
	github.com/dustin/go-humanize v1.0.1 // indirect
	github.com/go-ini/ini v1.67.0 // indirect
	github.com/goccy/go-json v0.10.5 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/klauspost/cpuid/v2 v2.2.10 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/minio/crc64nvme v1.0.1 // indirect
	github.com/minio/md5-simd v1.1.2 // indirect
	github.com/ncruces/go-strftime v1.0.0 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	github.com/rs/xid v1.6.0 // indirect
	golang.org/x/crypto v0.45.0 // indirect
	golang.org/x/net v0.47.0 // indirect
	golang.org/x/text v0.31.0 // indirect
	modernc.org/libc v1.75.7 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
)
