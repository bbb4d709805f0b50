package app

import (
	"time"

	"github.com/twinlake/twinlake/internal/iam"
	"github.com/twinlake/twinlake/internal/s3api"
	"github.com/twinlake/twinlake/internal/s3api/sigv4"
)

// stsIssuer serves the S3 endpoint's AssumeRole from IAM.
type stsIssuer struct{ iam *iam.Store }

func (a stsIssuer) AssumeRole(parent string, d time.Duration, inline []byte) (s3api.TemporaryCredential, error) {
	c, err := a.iam.AssumeRole(parent, d, inline)
	if err != nil {
		return s3api.TemporaryCredential{}, err
	}
	return s3api.TemporaryCredential{AccessKey: c.AccessKey, SecretKey: c.SecretKey,
		SessionToken: c.SessionToken, Expiration: c.Expiration}, nil
}

var _ s3api.SessionIssuer = stsIssuer{}

var _ sigv4.SessionCredentials = (*iam.Store)(nil)
