package s3api

import (
	"bytes"
	"encoding/xml"
	"testing"
)

// FuzzDecodeXML feeds arbitrary bodies to the decoder of every XML request
// the S3 edge accepts: it must answer an error or a value, never panic,
// and a decoded value must encode again.
func FuzzDecodeXML(f *testing.F) {
	for _, seed := range []string{
		`<CreateBucketConfiguration><LocationConstraint>us-east-1</LocationConstraint></CreateBucketConfiguration>`,
		`<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>`,
		`<Tagging><TagSet><Tag><Key>a</Key><Value>b</Value></Tag></TagSet></Tagging>`,
		`<ServerSideEncryptionConfiguration><Rule><ApplyServerSideEncryptionByDefault><SSEAlgorithm>AES256</SSEAlgorithm></ApplyServerSideEncryptionByDefault></Rule></ServerSideEncryptionConfiguration>`,
		`<Delete><Quiet>true</Quiet><Object><Key>k</Key><VersionId>null</VersionId></Object></Delete>`,
		`<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"x"</ETag></Part></CompleteMultipartUpload>`,
		`<Delete><Object><Key>&#0;</Key></Object>`,
		``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, v := range []any{
			&createBucketConfiguration{}, &versioningConfiguration{}, &tagging{}, &sseConfiguration{},
			&deleteRequest{}, &completeMultipartUpload{},
		} {
			if err := decodeXML(bytes.NewReader(data), v); err != nil {
				if err != errMalformedXML && err != errEntityTooLarge {
					t.Fatalf("decode %T: unexpected error %v", v, err)
				}
				continue
			}
			if _, err := xml.Marshal(v); err != nil {
				t.Fatalf("re-encode %T: %v", v, err)
			}
		}
	})
}
