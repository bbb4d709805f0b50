package sigv4

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// ErrMalformedPOST is returned by VerifyPost when the form's authentication
// fields are missing, repeated in meaning or malformed (a credential that is
// not key/date/region/s3/aws4_request, an x-amz-date that is not ISO 8601
// basic or not the credential's day, a signed form without a policy).
// S3: InvalidArgument or MalformedPOSTRequest, 400 (the edge chooses).
var ErrMalformedPOST = errors.New("sigv4: malformed POST form authentication")

// PostForm is the authentication a browser-based POST upload carries in its
// form fields rather than in headers: the base64 policy document as sent
// and either SigV4 fields (x-amz-algorithm, x-amz-credential, x-amz-date,
// x-amz-signature) or SigV2 ones (AWSAccessKeyId, signature), plus the
// session token of temporary credentials.
type PostForm struct {
	Policy        string
	Algorithm     string
	Credential    string
	Date          string
	Signature     string
	AccessKeyID   string
	SignatureV2   string
	SecurityToken string
}

// signed reports whether the form carries any authentication field.
func (f *PostForm) signed() bool {
	return f.Algorithm != "" || f.Credential != "" || f.Signature != "" || f.AccessKeyID != "" || f.SignatureV2 != ""
}

// VerifyPost authenticates a POST upload's form. The signature covers the
// base64 policy text exactly as sent: SigV4 is the hex HMAC-SHA256 of it
// under the signing key derived for the credential's scope (which must name
// service s3), SigV2 the base64 HMAC-SHA1 of it under the secret key. A form
// with no authentication field at all is Anonymous. The clock is not checked
// here: a POST policy carries its own expiration, which the caller checks.
func (v *Verifier) VerifyPost(f PostForm) (*Result, error) {
	if !f.signed() {
		return &Result{Anonymous: true, Payload: PayloadUnsigned, DecodedLength: -1, Service: "s3"}, nil
	}
	if f.Policy == "" {
		return nil, fmt.Errorf("%w: a signed form must carry a policy", ErrMalformedPOST)
	}
	v4 := f.Algorithm != "" || f.Credential != "" || f.Signature != "" || f.Date != ""
	v2 := f.AccessKeyID != "" || f.SignatureV2 != ""
	if v4 && v2 {
		return nil, ErrMultipleAuthMechanisms
	}
	if v2 {
		return v.verifyPostV2(f)
	}
	return v.verifyPostV4(f)
}

func (v *Verifier) verifyPostV4(f PostForm) (*Result, error) {
	if f.Algorithm != algorithm {
		if f.Algorithm == "" {
			return nil, fmt.Errorf("%w: x-amz-algorithm is required", ErrMalformedPOST)
		}
		return nil, ErrUnsupportedAlgorithm
	}
	accessKey, sc, err := parseCredential(f.Credential, ErrMalformedPOST)
	if err != nil {
		return nil, err
	}
	if err := checkScope(sc, "s3", ErrMalformedPOST); err != nil {
		return nil, err
	}
	signedAt, err := time.Parse(amzDateLayout, f.Date)
	if err != nil {
		return nil, fmt.Errorf("%w: x-amz-date must be YYYYMMDDTHHMMSSZ", ErrMalformedPOST)
	}
	if sc.date != f.Date[:8] {
		return nil, fmt.Errorf("%w: credential date is not x-amz-date's", ErrMalformedPOST)
	}
	if err := checkSignatureFormat(f.Signature, ErrMalformedPOST); err != nil {
		return nil, err
	}
	secret, err := v.secretKey(accessKey, f.SecurityToken)
	if err != nil {
		return nil, err
	}
	key := v.keys.get(accessKey, secret, sc)
	mac := hmac.New(sha256.New, key[:])
	mac.Write([]byte(f.Policy))
	want, _ := decodeHex32(f.Signature)
	if !hmac.Equal(mac.Sum(nil), want[:]) {
		return nil, &SignatureMismatchError{AccessKey: accessKey, SignatureProvided: f.Signature, StringToSign: f.Policy}
	}
	return &Result{
		AccessKey: accessKey, Region: sc.region, Service: "s3", SignedAt: signedAt,
		Payload: PayloadUnsigned, DecodedLength: -1, Signature: f.Signature, SessionToken: f.SecurityToken,
	}, nil
}

func (v *Verifier) verifyPostV2(f PostForm) (*Result, error) {
	if f.AccessKeyID == "" || f.SignatureV2 == "" {
		return nil, fmt.Errorf("%w: SigV2 needs AWSAccessKeyId and signature", ErrMalformedPOST)
	}
	secret, err := v.secretKey(f.AccessKeyID, f.SecurityToken)
	if err != nil {
		return nil, err
	}
	if !hmac.Equal([]byte(v2Sign(secret, f.Policy)), []byte(f.SignatureV2)) {
		return nil, &SignatureMismatchError{AccessKey: f.AccessKeyID, SignatureProvided: f.SignatureV2, StringToSign: f.Policy}
	}
	return &Result{
		AccessKey: f.AccessKeyID, Service: "s3", SignedAt: v.now(),
		Payload: PayloadUnsigned, DecodedLength: -1, Signature: f.SignatureV2, SessionToken: f.SecurityToken,
	}, nil
}

// SignPostPolicy returns the SigV4 signature of a base64 POST policy for
// secret and the scope date/region/s3: what a client puts in
// x-amz-signature. Tests and the CLI use it to build forms.
func SignPostPolicy(secret, date, region, policyB64 string) string {
	key := deriveKey(secret, scope{date: date, region: region, service: "s3"})
	mac := hmac.New(sha256.New, key[:])
	mac.Write([]byte(policyB64))
	return hex.EncodeToString(mac.Sum(nil))
}
