module github.com/sessctl/sessctl

go 1.26
