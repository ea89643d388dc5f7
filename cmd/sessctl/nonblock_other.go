//go:build !unix

package main

// nonBlock is 0 where opens of special files do not block.
const nonBlock = 0
