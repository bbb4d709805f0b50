package checksum

// crcMath is arithmetic in GF(2)[x] modulo a CRC polynomial, in the
// reflected bit order the CRC tables use: the most significant of the
// width bits is the coefficient of x^0 and bit 0 that of x^(width-1).
//
// It exists to combine CRCs. For a CRC whose initial value equals its final
// XOR (true of CRC32, CRC32C and CRC64NVME, all ones), processing B after A
// is linear in the register, giving
//
//	crc(A‖B) = crc(A)·x^(8·len(B)) mod P  ⊕  crc(B)
//
// so a multipart object's whole CRC follows from its parts' CRCs and sizes.
type crcMath struct {
	width uint   // 32 or 64
	poly  uint64 // reflected polynomial without the x^width term
}

// one returns the polynomial 1 (x^0).
func (m crcMath) one() uint64 { return 1 << (m.width - 1) }

// timesX returns b·x mod P. Raising the degree is a right shift here; the
// bit shifted out is the x^width term, which reduces to the polynomial.
func (m crcMath) timesX(b uint64) uint64 {
	if b&1 != 0 {
		return b>>1 ^ m.poly
	}
	return b >> 1
}

// mul returns a·b mod P.
func (m crcMath) mul(a, b uint64) uint64 {
	var prod uint64
	for bit := m.one(); a != 0 && bit != 0; bit >>= 1 {
		if a&bit != 0 {
			prod ^= b
			a ^= bit
		}
		b = m.timesX(b)
	}
	return prod
}

// xPow8n returns x^(8n) mod P by square-and-multiply over the bits of n.
func (m crcMath) xPow8n(n int64) uint64 {
	result := m.one()
	base := m.one() >> 8 // x^8
	for u := uint64(n); u != 0; u >>= 1 {
		if u&1 != 0 {
			result = m.mul(result, base)
		}
		base = m.mul(base, base)
	}
	return result
}

// combine returns crc(A‖B) from crc(A), crc(B) and len(B).
func (m crcMath) combine(crcA, crcB uint64, lenB int64) uint64 {
	return m.mul(crcA, m.xPow8n(lenB)) ^ crcB
}
