//go:build !unix

package render

// nonBlock is 0 where opens of special files do not block.
const nonBlock = 0
