package checksum

// crc64NVMEPoly is the CRC-64/NVME polynomial in reflected (LSB-first)
// form, which the FULL_OBJECT combination (crc_combine.go) works in. The
// hash itself is github.com/minio/crc64nvme's, which uses the CPU's
// carry-less multiply (PCLMULQDQ, AVX-512 or ARM PMULL) where it has one:
// the standard library's hash/crc64 accelerates only its two built-in
// polynomials.
const crc64NVMEPoly = 0x9a6c9329ac4bc9b5
