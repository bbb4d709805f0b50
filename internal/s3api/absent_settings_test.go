package s3api_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/twinlake/twinlake/internal/testsite"
)

// TestAbsentSettingsReadAsAWS: reads of the bucket settings twinlake does
// not keep answer, through the AWS SDK, as AWS does for a bucket without
// them (no website, no public access block, no ownership controls,
// acceleration never enabled,
// the owner pays, no logging, no notifications), NoSuchBucket for a
// missing bucket, and setting one stays NotImplemented.
func TestAbsentSettingsReadAsAWS(t *testing.T) {
	site := testsite.Start(t)
	c := sdkClient(site, site.SecretKey)
	ctx := t.Context()
	b := aws.String("plain")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetBucketWebsite(ctx, &s3.GetBucketWebsiteInput{Bucket: b}); apiCode(err) != "NoSuchWebsiteConfiguration" {
		t.Errorf("GetBucketWebsite: %v", err)
	}
	if _, err := c.GetPublicAccessBlock(ctx, &s3.GetPublicAccessBlockInput{Bucket: b}); apiCode(err) != "NoSuchPublicAccessBlockConfiguration" {
		t.Errorf("GetPublicAccessBlock: %v", err)
	}
	if _, err := c.GetBucketOwnershipControls(ctx, &s3.GetBucketOwnershipControlsInput{Bucket: b}); apiCode(err) != "OwnershipControlsNotFoundError" {
		t.Errorf("GetBucketOwnershipControls: %v", err)
	}
	if out, err := c.GetBucketAccelerateConfiguration(ctx, &s3.GetBucketAccelerateConfigurationInput{Bucket: b}); err != nil || out.Status != "" {
		t.Errorf("GetBucketAccelerateConfiguration: %+v %v", out, err)
	}
	if out, err := c.GetBucketRequestPayment(ctx, &s3.GetBucketRequestPaymentInput{Bucket: b}); err != nil || out.Payer != types.PayerBucketOwner {
		t.Errorf("GetBucketRequestPayment: %+v %v", out, err)
	}
	if out, err := c.GetBucketLogging(ctx, &s3.GetBucketLoggingInput{Bucket: b}); err != nil || out.LoggingEnabled != nil {
		t.Errorf("GetBucketLogging: %+v %v", out, err)
	}
	if out, err := c.GetBucketNotificationConfiguration(ctx, &s3.GetBucketNotificationConfigurationInput{Bucket: b}); err != nil ||
		len(out.QueueConfigurations)+len(out.TopicConfigurations)+len(out.LambdaFunctionConfigurations) != 0 {
		t.Errorf("GetBucketNotificationConfiguration: %+v %v", out, err)
	}
	if _, err := c.GetBucketLogging(ctx, &s3.GetBucketLoggingInput{Bucket: aws.String("nosuch")}); apiCode(err) != "NoSuchBucket" {
		t.Errorf("GetBucketLogging of a missing bucket: %v", err)
	}
	_, err := c.PutBucketWebsite(ctx, &s3.PutBucketWebsiteInput{Bucket: b, WebsiteConfiguration: &types.WebsiteConfiguration{
		IndexDocument: &types.IndexDocument{Suffix: aws.String("index.html")}}})
	if apiCode(err) != "NotImplemented" {
		t.Errorf("PutBucketWebsite: %v", err)
	}
	_, err = c.PutBucketOwnershipControls(ctx, &s3.PutBucketOwnershipControlsInput{Bucket: b, OwnershipControls: &types.OwnershipControls{
		Rules: []types.OwnershipControlsRule{{ObjectOwnership: types.ObjectOwnershipBucketOwnerEnforced}}}})
	if apiCode(err) != "NotImplemented" {
		t.Errorf("PutBucketOwnershipControls: %v", err)
	}
}
