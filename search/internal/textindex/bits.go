package textindex

import (
	"encoding/binary"
	"math/bits"
)

// Postings blocks are bit streams of Rice codes: a value v with
// parameter k is v>>k in unary (that many 0 bits, then a 1) followed by
// the k low bits of v. Bits are written from the lowest bit of each
// byte up. Each run of values in a block has its own k, chosen for the
// fewest bits, in 5 bits before the run (see postingsWriter).
const riceKBits = 5

// bitWriter appends bits to b, 32 at a time; fewer than 32 wait in acc.
type bitWriter struct {
	b   []byte
	acc uint64
	n   uint
}

// bits writes the nb (<= 32) low bits of v.
func (w *bitWriter) bits(v uint64, nb uint) {
	w.acc |= (v & (1<<nb - 1)) << w.n
	w.n += nb
	if w.n >= 32 {
		w.b = binary.LittleEndian.AppendUint32(w.b, uint32(w.acc))
		w.acc >>= 32
		w.n -= 32
	}
}

func (w *bitWriter) rice(v uint32, k uint) {
	q := uint(v >> k)
	if q+1+k <= 32 {
		// The unary part and the low bits in one write.
		w.bits(1<<q|(uint64(v)&(1<<k-1))<<(q+1), q+1+k)
		return
	}
	for q >= 32 {
		w.bits(0, 32)
		q -= 32
	}
	w.bits(1<<q, q+1)
	w.bits(uint64(v), k)
}

// run writes vals with the best Rice parameter, preceded by it.
func (w *bitWriter) run(vals []uint32) {
	k := bestRiceK(vals)
	w.bits(uint64(k), riceKBits)
	// rice, inlined with the writer's state in locals; shift counts are
	// masked so that the compiler emits plain shifts.
	acc, n, b := w.acc, w.n, w.b
	mask := uint32(1)<<k - 1
	for _, v := range vals {
		q := uint(v >> k)
		if nb := q + 1 + k; nb <= 32 {
			acc |= (uint64(1)<<(q&31) | uint64(v&mask)<<((q+1)&63)) << (n & 63)
			n += nb
			if n >= 32 {
				b = binary.LittleEndian.AppendUint32(b, uint32(acc))
				acc >>= 32
				n -= 32
			}
			continue
		}
		w.acc, w.n, w.b = acc, n, b
		w.rice(v, k)
		acc, n, b = w.acc, w.n, w.b
	}
	w.acc, w.n, w.b = acc, n, b
}

// flush writes out the bits waiting, the last byte padded with zero
// bits, and returns the bytes.
func (w *bitWriter) flush() []byte {
	for ; w.n > 0; w.n -= min(w.n, 8) {
		w.b = append(w.b, byte(w.acc))
		w.acc >>= 8
	}
	w.acc, w.n = 0, 0
	return w.b
}

// bestRiceK returns the Rice parameter that codes vals in the fewest
// bits of the two around log2 of 0.69 times their mean (where the best
// is for geometric gaps).
func bestRiceK(vals []uint32) uint {
	if len(vals) == 0 {
		return 0
	}
	var sum uint64
	for _, v := range vals {
		sum += uint64(v)
	}
	k0 := uint(max(0, bits.Len64(sum*69/100/uint64(len(vals)))-1))
	if k0 >= 31 {
		return 31
	}
	// The costs of k0 and k0+1 in one pass: n*(k+1) + the sum of v>>k.
	var c0, c1 uint64
	for _, v := range vals {
		c0 += uint64(v >> k0)
		c1 += uint64(v >> (k0 + 1))
	}
	if c1+uint64(len(vals)) < c0 {
		return k0 + 1
	}
	return k0
}

// bitReader reads what a bitWriter wrote; bad is set (and every later
// value is 0) once a read goes past the end or a value does not fit.
type bitReader struct {
	b   []byte
	off uint // in bits
	bad bool
}

// peek returns the bits from off on; beyond the end they are 0.
func (r *bitReader) peek() uint64 {
	i := int(r.off >> 3)
	var v uint64
	if i+8 <= len(r.b) {
		v = binary.LittleEndian.Uint64(r.b[i:])
	} else {
		for j := i; j < len(r.b); j++ {
			v |= uint64(r.b[j]) << (8 * uint(j-i))
		}
	}
	return v >> (r.off & 7)
}

func (r *bitReader) bits(nb uint) uint32 {
	if nb == 0 || r.bad {
		return 0
	}
	v := uint32(r.peek() & (1<<nb - 1))
	r.off += nb
	if r.off > uint(len(r.b))*8 {
		r.bad = true
		return 0
	}
	return v
}

func (r *bitReader) rice(k uint) uint32 {
	var q uint64
	for !r.bad {
		v := r.peek()
		if v != 0 {
			tz := uint(bits.TrailingZeros64(v))
			q += uint64(tz)
			r.off += tz + 1
			if r.off > uint(len(r.b))*8 || q > uint64(^uint32(0)>>k) {
				r.bad = true
				return 0
			}
			return uint32(q)<<k | r.bits(k)
		}
		// 57 or more zero bits (or the end): skip 56 of them.
		q += 56
		r.off += 56
		if r.off >= uint(len(r.b))*8 {
			r.bad = true
		}
	}
	return 0
}

// run reads n values written by bitWriter.run, appending them to out.
func (r *bitReader) run(out []uint32, n int) []uint32 {
	k := uint(r.bits(riceKBits))
	mask := uint64(1)<<k - 1
	for range n {
		// Where eight whole bytes are left and the code lies in the 57
		// bits they surely give, decode from one load; else as rice does.
		if i := int(r.off >> 3); !r.bad && i+8 <= len(r.b) {
			v := binary.LittleEndian.Uint64(r.b[i:]) >> (r.off & 7)
			if v != 0 {
				q := uint(bits.TrailingZeros64(v))
				if q+1+k <= 57 && uint64(q) <= uint64(^uint32(0)>>k) {
					out = append(out, uint32(q)<<k|uint32((v>>((q+1)&63))&mask))
					r.off += q + 1 + k
					continue
				}
			}
		}
		out = append(out, r.rice(k))
	}
	return out
}
