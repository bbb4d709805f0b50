package s3api

import (
	"encoding/xml"
	"io"
	"time"

	"github.com/twinlake/twinlake/internal/checksum"
)

const s3NS = "http://s3.amazonaws.com/doc/2006-03-01/"

// maxXMLBody bounds any XML request body (DeleteObjects of 1000 max-length
// keys fits).
const maxXMLBody = 2 << 20

// decodeXML reads a bounded XML body into v; any failure is MalformedXML.
func decodeXML(body io.Reader, v any) error {
	data, err := io.ReadAll(io.LimitReader(body, maxXMLBody+1))
	if err != nil {
		return err
	}
	if len(data) > maxXMLBody {
		return errEntityTooLarge
	}
	if err := xml.Unmarshal(data, v); err != nil {
		return errMalformedXML
	}
	return nil
}

func isoTime(nanos int64) string {
	return time.Unix(0, nanos).UTC().Format("2006-01-02T15:04:05.000Z")
}

type owner struct {
	ID          string `xml:"ID"`
	DisplayName string `xml:"DisplayName"`
}

var siteOwner = owner{ID: "twinlake", DisplayName: "twinlake"}

type listAllMyBucketsResult struct {
	XMLName xml.Name     `xml:"ListAllMyBucketsResult"`
	NS      string       `xml:"xmlns,attr"`
	Owner   owner        `xml:"Owner"`
	Buckets []bucketInfo `xml:"Buckets>Bucket"`
	// ContinuationToken is set when more buckets follow the page.
	ContinuationToken string `xml:"ContinuationToken,omitempty"`
	Prefix            string `xml:"Prefix,omitempty"`
}

type bucketInfo struct {
	Name         string `xml:"Name"`
	CreationDate string `xml:"CreationDate"`
	BucketRegion string `xml:"BucketRegion,omitempty"`
}

type locationConstraint struct {
	XMLName xml.Name `xml:"LocationConstraint"`
	NS      string   `xml:"xmlns,attr"`
	Value   string   `xml:",chardata"`
}

type createBucketConfiguration struct {
	XMLName            xml.Name `xml:"CreateBucketConfiguration"`
	LocationConstraint string   `xml:"LocationConstraint"`
}

type versioningConfiguration struct {
	XMLName   xml.Name `xml:"VersioningConfiguration"`
	NS        string   `xml:"xmlns,attr,omitempty"`
	Status    string   `xml:"Status,omitempty"`
	MFADelete string   `xml:"MfaDelete,omitempty"`
}

type tag struct {
	Key   string `xml:"Key"`
	Value string `xml:"Value"`
}

type tagging struct {
	XMLName xml.Name `xml:"Tagging"`
	NS      string   `xml:"xmlns,attr,omitempty"`
	TagSet  []tag    `xml:"TagSet>Tag"`
}

type sseRule struct {
	Algorithm string `xml:"ApplyServerSideEncryptionByDefault>SSEAlgorithm"`
	KMSKeyID  string `xml:"ApplyServerSideEncryptionByDefault>KMSMasterKeyID,omitempty"`
}

type sseConfiguration struct {
	XMLName xml.Name  `xml:"ServerSideEncryptionConfiguration"`
	NS      string    `xml:"xmlns,attr,omitempty"`
	Rules   []sseRule `xml:"Rule"`
}

type listObjectsV2Result struct {
	XMLName               xml.Name `xml:"ListBucketResult"`
	NS                    string   `xml:"xmlns,attr"`
	Name                  string   `xml:"Name"`
	Prefix                string   `xml:"Prefix"`
	Delimiter             string   `xml:"Delimiter,omitempty"`
	MaxKeys               int      `xml:"MaxKeys"`
	EncodingType          string   `xml:"EncodingType,omitempty"`
	KeyCount              int      `xml:"KeyCount"`
	IsTruncated           bool     `xml:"IsTruncated"`
	ContinuationToken     *string  `xml:"ContinuationToken"` // echoed when sent, even empty
	NextContinuationToken string   `xml:"NextContinuationToken,omitempty"`
	StartAfter            string   `xml:"StartAfter,omitempty"`
	// Entries are the Contents and CommonPrefixes (listEntries).
	Entries []byte `xml:",innerxml"`
}

type listObjectsV1Result struct {
	XMLName      xml.Name `xml:"ListBucketResult"`
	NS           string   `xml:"xmlns,attr"`
	Name         string   `xml:"Name"`
	Prefix       string   `xml:"Prefix"`
	Marker       string   `xml:"Marker"`
	NextMarker   string   `xml:"NextMarker,omitempty"`
	Delimiter    string   `xml:"Delimiter,omitempty"`
	MaxKeys      int      `xml:"MaxKeys"`
	EncodingType string   `xml:"EncodingType,omitempty"`
	IsTruncated  bool     `xml:"IsTruncated"`
	// Entries are the Contents and CommonPrefixes (listEntries).
	Entries []byte `xml:",innerxml"`
}

type objectEntry struct {
	Key          string `xml:"Key"`
	LastModified string `xml:"LastModified"`
	ETag         string `xml:"ETag"`
	listedChecksum
	Size         int64  `xml:"Size"`
	StorageClass string `xml:"StorageClass"`
	Owner        *owner `xml:"Owner,omitempty"`
}

// listedChecksum is an object's checksum as a listing shows it.
type listedChecksum struct {
	ChecksumAlgorithm string `xml:"ChecksumAlgorithm,omitempty"`
	ChecksumType      string `xml:"ChecksumType,omitempty"`
}

type commonPrefix struct {
	Prefix string `xml:"Prefix"`
}

type listVersionsResult struct {
	XMLName             xml.Name `xml:"ListVersionsResult"`
	NS                  string   `xml:"xmlns,attr"`
	Name                string   `xml:"Name"`
	Prefix              string   `xml:"Prefix"`
	KeyMarker           string   `xml:"KeyMarker"`
	VersionIDMarker     string   `xml:"VersionIdMarker"`
	NextKeyMarker       string   `xml:"NextKeyMarker,omitempty"`
	NextVersionIDMarker string   `xml:"NextVersionIdMarker,omitempty"`
	Delimiter           string   `xml:"Delimiter,omitempty"`
	MaxKeys             int      `xml:"MaxKeys"`
	EncodingType        string   `xml:"EncodingType,omitempty"`
	IsTruncated         bool     `xml:"IsTruncated"`
	// Entries are the versions, delete markers and CommonPrefixes
	// (versionEntries).
	Entries []byte `xml:",innerxml"`
}

type versionEntry struct {
	XMLName      xml.Name `xml:"Version"`
	Key          string   `xml:"Key"`
	VersionID    string   `xml:"VersionId"`
	IsLatest     bool     `xml:"IsLatest"`
	LastModified string   `xml:"LastModified"`
	ETag         string   `xml:"ETag"`
	listedChecksum
	Size         int64  `xml:"Size"`
	StorageClass string `xml:"StorageClass"`
	Owner        owner  `xml:"Owner"`
}

type deleteMarkerEntry struct {
	XMLName      xml.Name `xml:"DeleteMarker"`
	Key          string   `xml:"Key"`
	VersionID    string   `xml:"VersionId"`
	IsLatest     bool     `xml:"IsLatest"`
	LastModified string   `xml:"LastModified"`
	Owner        owner    `xml:"Owner"`
}

type deleteRequest struct {
	XMLName xml.Name `xml:"Delete"`
	Quiet   bool     `xml:"Quiet"`
	Objects []struct {
		Key       string `xml:"Key"`
		VersionID string `xml:"VersionId"`
	} `xml:"Object"`
}

type deletedEntry struct {
	Key                   string `xml:"Key"`
	VersionID             string `xml:"VersionId,omitempty"`
	DeleteMarker          bool   `xml:"DeleteMarker,omitempty"`
	DeleteMarkerVersionID string `xml:"DeleteMarkerVersionId,omitempty"`
}

type deleteErrorEntry struct {
	Key       string `xml:"Key"`
	VersionID string `xml:"VersionId,omitempty"`
	Code      string `xml:"Code"`
	Message   string `xml:"Message"`
}

type deleteResult struct {
	XMLName xml.Name           `xml:"DeleteResult"`
	NS      string             `xml:"xmlns,attr"`
	Deleted []deletedEntry     `xml:"Deleted"`
	Errors  []deleteErrorEntry `xml:"Error"`
}

type copyObjectResult struct {
	XMLName      xml.Name `xml:"CopyObjectResult"`
	NS           string   `xml:"xmlns,attr"`
	LastModified string   `xml:"LastModified"`
	ETag         string   `xml:"ETag"`
	checksumFields
}

type copyPartResult struct {
	XMLName      xml.Name `xml:"CopyPartResult"`
	NS           string   `xml:"xmlns,attr"`
	LastModified string   `xml:"LastModified"`
	ETag         string   `xml:"ETag"`
}

type initiateMultipartUploadResult struct {
	XMLName  xml.Name `xml:"InitiateMultipartUploadResult"`
	NS       string   `xml:"xmlns,attr"`
	Bucket   string   `xml:"Bucket"`
	Key      string   `xml:"Key"`
	UploadID string   `xml:"UploadId"`
}

type completeMultipartUpload struct {
	XMLName xml.Name `xml:"CompleteMultipartUpload"`
	Parts   []struct {
		PartNumber int    `xml:"PartNumber"`
		ETag       string `xml:"ETag"`
		checksumFields
	} `xml:"Part"`
}

type completeMultipartUploadResult struct {
	XMLName  xml.Name `xml:"CompleteMultipartUploadResult"`
	NS       string   `xml:"xmlns,attr"`
	Location string   `xml:"Location"`
	Bucket   string   `xml:"Bucket"`
	Key      string   `xml:"Key"`
	ETag     string   `xml:"ETag"`
	checksumFields
	ChecksumType string `xml:"ChecksumType,omitempty"`
}

type partEntry struct {
	PartNumber   int    `xml:"PartNumber"`
	LastModified string `xml:"LastModified"`
	ETag         string `xml:"ETag"`
	Size         int64  `xml:"Size"`
	checksumFields
}

type listPartsResult struct {
	XMLName              xml.Name    `xml:"ListPartsResult"`
	NS                   string      `xml:"xmlns,attr"`
	Bucket               string      `xml:"Bucket"`
	Key                  string      `xml:"Key"`
	UploadID             string      `xml:"UploadId"`
	PartNumberMarker     int         `xml:"PartNumberMarker"`
	NextPartNumberMarker int         `xml:"NextPartNumberMarker"`
	MaxParts             int         `xml:"MaxParts"`
	IsTruncated          bool        `xml:"IsTruncated"`
	StorageClass         string      `xml:"StorageClass"`
	ChecksumAlgorithm    string      `xml:"ChecksumAlgorithm,omitempty"`
	Initiator            owner       `xml:"Initiator"`
	Owner                owner       `xml:"Owner"`
	Parts                []partEntry `xml:"Part"`
}

type uploadEntry struct {
	Key          string `xml:"Key"`
	UploadID     string `xml:"UploadId"`
	Initiated    string `xml:"Initiated"`
	StorageClass string `xml:"StorageClass"`
	Initiator    owner  `xml:"Initiator"`
	Owner        owner  `xml:"Owner"`
}

type listUploadsResult struct {
	XMLName            xml.Name       `xml:"ListMultipartUploadsResult"`
	NS                 string         `xml:"xmlns,attr"`
	Bucket             string         `xml:"Bucket"`
	KeyMarker          string         `xml:"KeyMarker"`
	UploadIDMarker     string         `xml:"UploadIdMarker"`
	NextKeyMarker      string         `xml:"NextKeyMarker"`
	NextUploadIDMarker string         `xml:"NextUploadIdMarker"`
	Prefix             string         `xml:"Prefix"`
	Delimiter          string         `xml:"Delimiter,omitempty"`
	EncodingType       string         `xml:"EncodingType,omitempty"`
	MaxUploads         int            `xml:"MaxUploads"`
	IsTruncated        bool           `xml:"IsTruncated"`
	Uploads            []uploadEntry  `xml:"Upload"`
	CommonPrefixes     []commonPrefix `xml:"CommonPrefixes"`
}

// checksumFields are the additional-checksum elements of S3 results.
type checksumFields struct {
	ChecksumCRC32     string `xml:"ChecksumCRC32,omitempty"`
	ChecksumCRC32C    string `xml:"ChecksumCRC32C,omitempty"`
	ChecksumSHA1      string `xml:"ChecksumSHA1,omitempty"`
	ChecksumSHA256    string `xml:"ChecksumSHA256,omitempty"`
	ChecksumCRC64NVME string `xml:"ChecksumCRC64NVME,omitempty"`
	ChecksumMD5       string `xml:"ChecksumMD5,omitempty"`
	ChecksumSHA512    string `xml:"ChecksumSHA512,omitempty"`
	ChecksumXXHASH64  string `xml:"ChecksumXXHASH64,omitempty"`
	ChecksumXXHASH3   string `xml:"ChecksumXXHASH3,omitempty"`
	ChecksumXXHASH128 string `xml:"ChecksumXXHASH128,omitempty"`
}

// field is the element for alg, nil for an algorithm it has none for.
func (c *checksumFields) field(alg string) *string {
	switch checksum.Algorithm(alg) {
	case checksum.CRC32:
		return &c.ChecksumCRC32
	case checksum.CRC32C:
		return &c.ChecksumCRC32C
	case checksum.SHA1:
		return &c.ChecksumSHA1
	case checksum.SHA256:
		return &c.ChecksumSHA256
	case checksum.CRC64NVME:
		return &c.ChecksumCRC64NVME
	case checksum.MD5:
		return &c.ChecksumMD5
	case checksum.SHA512:
		return &c.ChecksumSHA512
	case checksum.XXHASH64:
		return &c.ChecksumXXHASH64
	case checksum.XXHASH3:
		return &c.ChecksumXXHASH3
	case checksum.XXHASH128:
		return &c.ChecksumXXHASH128
	}
	return nil
}

// set fills the element for each algorithm present in sums.
func (c *checksumFields) set(sums map[string]string) {
	for alg, v := range sums {
		if f := c.field(alg); f != nil {
			*f = v
		}
	}
}

// get returns the value for alg from a request element set.
func (c *checksumFields) get(alg string) string {
	if f := c.field(alg); f != nil {
		return *f
	}
	return ""
}
