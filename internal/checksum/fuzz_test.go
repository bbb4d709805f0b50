package checksum

import (
	"net/http"
	"testing"
)

// FuzzFromHeaders feeds arbitrary header values to the parser: it must not
// panic, and whatever it accepts must be internally consistent.
func FuzzFromHeaders(f *testing.F) {
	f.Add("x-amz-checksum-crc32", "yfQ5Jg==", "", "", "")
	f.Add("x-amz-checksum-sha256", "", "SHA256", "x-amz-checksum-sha256", "")
	f.Add("x-amz-checksum-CRC64NVME", "AAAAAAAAAAA=", "crc64nvme", "", "kAFQmDzST7DWlj99KOF/cg==")
	f.Add("x-amz-checksum-type", "COMPOSITE", "", " , ", "")
	f.Fuzz(func(t *testing.T, name, value, sdkAlg, trailer, contentMD5 string) {
		h := http.Header{}
		h.Set(name, value)
		h.Set(HeaderSDKAlgorithm, sdkAlg)
		h.Set(HeaderTrailer, trailer)
		h.Set(HeaderContentMD5, contentMD5)
		d, err := FromHeaders(h)
		if err != nil {
			return
		}
		if d.Algorithm != "" && !d.Algorithm.Valid() {
			t.Fatalf("accepted invalid algorithm %q", d.Algorithm)
		}
		if d.Value != "" {
			if _, err := d.Algorithm.Decode(d.Value); err != nil {
				t.Fatalf("accepted malformed value: %v", err)
			}
		}
		if d.Trailer && d.Value != "" {
			t.Fatal("trailer declared alongside a header value")
		}
	})
}

// FuzzFullObjectCRC checks the CRC combine arithmetic against direct
// computation for arbitrary data split at an arbitrary point.
func FuzzFullObjectCRC(f *testing.F) {
	f.Add([]byte("123456789"), uint16(4))
	f.Add([]byte{}, uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, split uint16) {
		cut := int(split) % (len(data) + 1)
		a, b := data[:cut], data[cut:]
		for _, alg := range []Algorithm{CRC32, CRC32C, CRC64NVME} {
			got, err := FullObjectCRC(alg, []Part{
				{Checksum: alg.Sum(a), Size: int64(len(a))},
				{Checksum: alg.Sum(b), Size: int64(len(b))},
			})
			if want := alg.Sum(data); err != nil || got != want {
				t.Fatalf("%s split %d/%d: got %q, %v; want %q", alg, len(a), len(b), got, err, want)
			}
		}
	})
}
