package s3api

import (
	"crypto/md5"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"sync/atomic"

	"github.com/twinlake/twinlake/internal/objects"
)

// SSE-C request headers: the key of the object written or read, and the
// key of a copy's source.
const (
	ssecPrefix     = "x-amz-server-side-encryption-customer-"
	ssecCopyPrefix = "x-amz-copy-source-server-side-encryption-customer-"
)

// SSE-C protocol errors, as S3 words them.
var (
	errSSECInsecure = apiErr("InvalidRequest", http.StatusBadRequest,
		"Requests specifying Server Side Encryption with Customer provided keys must be made over a secure connection.")
	errSSECNoAlgorithm = apiErr("InvalidArgument", http.StatusBadRequest,
		"Requests specifying Server Side Encryption with Customer provided keys must provide a valid encryption algorithm.")
	errSSECAlgorithm = apiErr("InvalidEncryptionAlgorithmError", http.StatusBadRequest,
		"The encryption request you specified is not valid. The valid value is AES256.")
	errSSECNoKey = apiErr("InvalidArgument", http.StatusBadRequest,
		"Requests specifying Server Side Encryption with Customer provided keys must provide an appropriate secret key.")
	errSSECBadKey = apiErr("InvalidArgument", http.StatusBadRequest,
		"The secret key was invalid for the specified algorithm.")
	errSSECNoMD5 = apiErr("InvalidArgument", http.StatusBadRequest,
		"Requests specifying Server Side Encryption with Customer provided keys must provide the client calculated MD5 of the secret key.")
	errSSECBadMD5 = apiErr("InvalidArgument", http.StatusBadRequest,
		"The calculated MD5 hash of the key did not match the hash that was provided.")
	errSSECWithSSE = apiErr("InvalidArgument", http.StatusBadRequest,
		"Server Side Encryption with Customer provided key is incompatible with the encryption method specified.")
	errSSEOnRead = apiErr("InvalidArgument", http.StatusBadRequest,
		"x-amz-server-side-encryption header is not supported for this operation.")
	errKMSUnsupported = apiErr("InvalidArgument", http.StatusBadRequest,
		"Server Side Encryption with AWS KMS keys is not supported by this server; use AES256 (SSE-S3) or customer keys (SSE-C).")
)

// ssecPolicy holds whether SSE-C keys may travel over plain HTTP.
type ssecPolicy struct{ allowHTTP atomic.Bool }

// SetSSECAllowHTTP lets SSE-C keys arrive over plain HTTP (for a site
// behind a TLS-terminating proxy on a trusted network, or tests). Off,
// such requests are refused, as S3 and MinIO refuse them. Safe to call
// while serving.
func (s *Server) SetSSECAllowHTTP(allow bool) { s.ssec.allowHTTP.Store(allow) }

// customerKey reads the SSE-C headers under prefix: nil when there are
// none, else the 32-byte key after checking the algorithm, the key and its
// MD5, and that the request came over TLS.
func (s *Server) customerKey(req *request, prefix string) ([]byte, error) {
	h := req.r.Header
	alg, key, sum := hvalues(h, prefix+"algorithm"), hvalues(h, prefix+"key"), hvalues(h, prefix+"key-md5")
	if len(alg) == 0 && len(key) == 0 && len(sum) == 0 {
		return nil, nil
	}
	if req.r.TLS == nil && !s.ssec.allowHTTP.Load() {
		return nil, errSSECInsecure
	}
	switch {
	case len(alg) == 0 || alg[0] == "":
		return nil, errSSECNoAlgorithm
	case len(alg) > 1 || alg[0] != objects.SSEAlgorithm:
		return nil, errSSECAlgorithm
	case len(key) == 0 || key[0] == "":
		return nil, errSSECNoKey
	}
	raw, err := base64.StdEncoding.DecodeString(key[0])
	if err != nil || len(key) > 1 || len(raw) != objects.CustomerKeySize {
		return nil, errSSECBadKey
	}
	if len(sum) == 0 || sum[0] == "" {
		return nil, errSSECNoMD5
	}
	want, err := base64.StdEncoding.DecodeString(sum[0])
	got := md5.Sum(raw)
	if err != nil || len(sum) > 1 || subtle.ConstantTimeCompare(want, got[:]) != 1 {
		return nil, errSSECBadMD5
	}
	return raw, nil
}

// setCustomerKeyHeaders echoes the SSE-C algorithm and key MD5 of a
// response about an object encrypted with key (nil: none sent).
func setCustomerKeyHeaders(h http.Header, v *objects.Version, key []byte) {
	if len(v.KeyCheck) == 0 {
		return
	}
	h.Set(ssecPrefix+"algorithm", objects.SSEAlgorithm)
	if key != nil {
		sum := md5.Sum(key)
		h.Set(ssecPrefix+"key-MD5", base64.StdEncoding.EncodeToString(sum[:]))
	}
}

// checkKMSHeaders refuses the SSE-KMS headers: twinlake has no KMS, and
// accepting them would let a client believe its object is under a key it
// chose.
func checkKMSHeaders(h http.Header) error {
	for _, name := range []string{"x-amz-server-side-encryption-aws-kms-key-id", "x-amz-server-side-encryption-context"} {
		if len(hvalues(h, name)) > 0 {
			return errKMSUnsupported
		}
	}
	if v := hget(h, "x-amz-server-side-encryption-bucket-key-enabled"); v != "" && v != "false" {
		return errKMSUnsupported
	}
	return nil
}
