package policy

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// Documents from AWS's IAM and S3 user guides (example policies), trimmed
// to the statements that matter.
const (
	// "Allows IAM users to access their own home directory in Amazon S3".
	homeDirPolicy = `{"Version":"2012-10-17","Statement":[
	  {"Sid":"AllowListingOfUserFolder","Action":["s3:ListBucket"],"Effect":"Allow",
	   "Resource":["arn:aws:s3:::bucket-name"],
	   "Condition":{"StringLike":{"s3:prefix":["","home/","home/${aws:username}/*"]}}},
	  {"Sid":"AllowAllS3ActionsInUserFolder","Effect":"Allow","Action":["s3:*"],
	   "Resource":["arn:aws:s3:::bucket-name/home/${aws:username}/*"]}]}`
	// "Denies access to AWS based on the source IP".
	sourceIPPolicy = `{"Version":"2012-10-17","Statement":{
	  "Effect":"Deny","Action":"*","Resource":"*",
	  "Condition":{"NotIpAddress":{"aws:SourceIp":["192.0.2.0/24","203.0.113.0/24"]}}}}`
	// "Allows access within specific dates" (aws:CurrentTime).
	datesPolicy = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject",
	  "Resource":"*","Condition":{"DateGreaterThan":{"aws:CurrentTime":"2020-04-01T00:00:00Z"},
	  "DateLessThan":{"aws:CurrentTime":"2020-06-30T23:59:59Z"}}}]}`
	// S3 bucket policy "Requiring HTTPS" (aws:SecureTransport) plus public read.
	publicReadHTTPSPolicy = `{"Version":"2012-10-17","Statement":[
	  {"Sid":"PublicRead","Effect":"Allow","Principal":"*","Action":["s3:GetObject","s3:GetObjectVersion"],
	   "Resource":["arn:aws:s3:::DOC-EXAMPLE-BUCKET/*"]},
	  {"Sid":"RestrictToTLSRequestsOnly","Effect":"Deny","Principal":{"AWS":"*"},"Action":"s3:*",
	   "Resource":["arn:aws:s3:::DOC-EXAMPLE-BUCKET","arn:aws:s3:::DOC-EXAMPLE-BUCKET/*"],
	   "Condition":{"Bool":{"aws:SecureTransport":"false"}}}]}`
	// "Deny uploads without SSE" (s3:x-amz-server-side-encryption).
	requireSSEPolicy = `{"Version":"2012-10-17","Statement":[
	  {"Effect":"Allow","Action":"s3:*","Resource":"arn:aws:s3:::b/*"},
	  {"Sid":"DenyIncorrectEncryptionHeader","Effect":"Deny","Action":"s3:PutObject","Resource":"arn:aws:s3:::b/*",
	   "Condition":{"StringNotEquals":{"s3:x-amz-server-side-encryption":"AES256"}}},
	  {"Sid":"DenyUnEncryptedObjectUploads","Effect":"Deny","Action":"s3:PutObject","Resource":"arn:aws:s3:::b/*",
	   "Condition":{"Null":{"s3:x-amz-server-side-encryption":"true"}}}]}`
	// "Limit the number of keys listed" (s3:max-keys) and a delimiter.
	maxKeysPolicy = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:ListBucket",
	  "Resource":"arn:aws:s3:::b","Condition":{"NumericLessThanEquals":{"s3:max-keys":"10"},
	  "StringEquals":{"s3:delimiter":"/"}}}]}`
	// NotAction: "allow everything but IAM", as AWS's NotAction example, for S3.
	notActionPolicy = `{"Version":"2012-10-17","Statement":[
	  {"Effect":"Allow","NotAction":["s3:Delete*","s3:PutBucketPolicy"],"Resource":"*"}]}`
	// NotResource: deny everything outside one bucket.
	notResourcePolicy = `{"Version":"2012-10-17","Statement":[
	  {"Effect":"Allow","Action":"s3:*","Resource":"*"},
	  {"Effect":"Deny","Action":"s3:*","NotResource":["arn:aws:s3:::team","arn:aws:s3:::team/*"]}]}`
	// An old-version document: ${aws:username} is literal text.
	oldVersionPolicy = `{"Statement":[{"Effect":"Allow","Action":"s3:GetObject",
	  "Resource":"arn:aws:s3:::b/${aws:username}/*"}]}`
)

func TestEvaluate(t *testing.T) {
	at := func(s string) time.Time { tm, _ := time.Parse(time.RFC3339, s); return tm }
	ip := netip.MustParseAddr
	cases := []struct {
		name   string
		policy string
		bucket bool
		req    Request
		want   Decision
	}{
		{"home list root", homeDirPolicy, false, Request{Action: "s3:ListBucket", Resource: "arn:aws:s3:::bucket-name", Username: "alice", Values: map[string]string{"s3:prefix": ""}}, Allow},
		{"home list own", homeDirPolicy, false, Request{Action: "s3:ListBucket", Resource: "arn:aws:s3:::bucket-name", Username: "alice", Values: map[string]string{"s3:prefix": "home/alice/photos"}}, Allow},
		{"home list other's", homeDirPolicy, false, Request{Action: "s3:ListBucket", Resource: "arn:aws:s3:::bucket-name", Username: "alice", Values: map[string]string{"s3:prefix": "home/bob/"}}, NoDecision},
		{"home list no prefix", homeDirPolicy, false, Request{Action: "s3:ListBucket", Resource: "arn:aws:s3:::bucket-name", Username: "alice"}, NoDecision},
		{"home get own", homeDirPolicy, false, Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::bucket-name/home/alice/a.txt", Username: "alice"}, Allow},
		{"home get other's", homeDirPolicy, false, Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::bucket-name/home/bob/a.txt", Username: "alice"}, NoDecision},
		{"home action case-insensitive", homeDirPolicy, false, Request{Action: "S3:getobject", Resource: "arn:aws:s3:::bucket-name/home/alice/a", Username: "alice"}, Allow},
		{"home anonymous has no username", homeDirPolicy, false, Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::bucket-name/home//a", Anonymous: true}, NoDecision},
		{"ip inside", sourceIPPolicy, false, Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::b/k", SourceIP: ip("192.0.2.7")}, NoDecision},
		{"ip outside denied", sourceIPPolicy, false, Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::b/k", SourceIP: ip("198.51.100.1")}, Deny},
		{"ip v4-mapped inside", sourceIPPolicy, false, Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::b/k", SourceIP: ip("::ffff:203.0.113.9")}, NoDecision},
		{"ip unknown: NotIpAddress holds", sourceIPPolicy, false, Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::b/k"}, Deny},
		{"date within", datesPolicy, false, Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::b/k", Now: at("2020-05-01T12:00:00Z")}, Allow},
		{"date before", datesPolicy, false, Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::b/k", Now: at("2020-03-01T12:00:00Z")}, NoDecision},
		{"date after", datesPolicy, false, Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::b/k", Now: at("2021-01-01T00:00:00Z")}, NoDecision},
		{"public read https", publicReadHTTPSPolicy, true, Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::DOC-EXAMPLE-BUCKET/a", Anonymous: true, Secure: true}, Allow},
		{"public read http denied", publicReadHTTPSPolicy, true, Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::DOC-EXAMPLE-BUCKET/a", Anonymous: true}, Deny},
		{"public put not allowed", publicReadHTTPSPolicy, true, Request{Action: "s3:PutObject", Resource: "arn:aws:s3:::DOC-EXAMPLE-BUCKET/a", Anonymous: true, Secure: true}, NoDecision},
		{"public read other bucket", publicReadHTTPSPolicy, true, Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::other/a", Anonymous: true, Secure: true}, NoDecision},
		{"sse header AES256", requireSSEPolicy, false, Request{Action: "s3:PutObject", Resource: "arn:aws:s3:::b/k", Values: map[string]string{"s3:x-amz-server-side-encryption": "AES256"}}, Allow},
		{"sse header wrong", requireSSEPolicy, false, Request{Action: "s3:PutObject", Resource: "arn:aws:s3:::b/k", Values: map[string]string{"s3:x-amz-server-side-encryption": "aws:kms"}}, Deny},
		{"sse header missing", requireSSEPolicy, false, Request{Action: "s3:PutObject", Resource: "arn:aws:s3:::b/k"}, Deny},
		{"sse get unaffected", requireSSEPolicy, false, Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::b/k"}, Allow},
		{"max-keys ok", maxKeysPolicy, false, Request{Action: "s3:ListBucket", Resource: "arn:aws:s3:::b", Values: map[string]string{"s3:max-keys": "10", "s3:delimiter": "/"}}, Allow},
		{"max-keys too many", maxKeysPolicy, false, Request{Action: "s3:ListBucket", Resource: "arn:aws:s3:::b", Values: map[string]string{"s3:max-keys": "1000", "s3:delimiter": "/"}}, NoDecision},
		{"max-keys no delimiter", maxKeysPolicy, false, Request{Action: "s3:ListBucket", Resource: "arn:aws:s3:::b", Values: map[string]string{"s3:max-keys": "5"}}, NoDecision},
		{"notaction allows get", notActionPolicy, false, Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::b/k"}, Allow},
		{"notaction excludes delete", notActionPolicy, false, Request{Action: "s3:DeleteObject", Resource: "arn:aws:s3:::b/k"}, NoDecision},
		{"notaction excludes policy", notActionPolicy, false, Request{Action: "s3:PutBucketPolicy", Resource: "arn:aws:s3:::b"}, NoDecision},
		{"notresource inside", notResourcePolicy, false, Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::team/x"}, Allow},
		{"notresource outside", notResourcePolicy, false, Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::other/x"}, Deny},
		{"old version no substitution", oldVersionPolicy, false, Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::b/alice/k", Username: "alice"}, NoDecision},
		{"old version literal", oldVersionPolicy, false, Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::b/${aws:username}/k", Username: "alice"}, Allow},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			parse := Parse
			if c.bucket {
				parse = ParseBucket
			}
			p, err := parse([]byte(c.policy))
			if err != nil {
				t.Fatal(err)
			}
			if got := Evaluate([]*Policy{p}, &c.req); got != c.want {
				t.Fatalf("Evaluate = %v, want %v", got, c.want)
			}
		})
	}
}

func TestAuthorize(t *testing.T) {
	rw := Builtin["readwrite"]
	ro := Builtin["readonly"]
	denyDelete := MustParse(`{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Action":"s3:DeleteObject","Resource":"*"}]}`)
	onlyB := MustParse(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":["arn:aws:s3:::b","arn:aws:s3:::b/*"]}]}`)
	bucketAlice, _ := ParseBucket([]byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":["arn:aws:iam:::user/alice"]},"Action":"s3:GetObject","Resource":"arn:aws:s3:::c/*"}]}`))
	bucketDenyAll, _ := ParseBucket([]byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:*","Resource":"arn:aws:s3:::c/secret/*"}]}`))
	get := func(res string) *Request {
		return &Request{Action: "s3:GetObject", Resource: res, Username: "alice"}
	}
	cases := []struct {
		name string
		sets Sets
		req  *Request
		want bool
	}{
		{"nothing", Sets{}, get("arn:aws:s3:::b/k"), false},
		{"identity allow", Sets{Identity: []*Policy{ro}}, get("arn:aws:s3:::b/k"), true},
		{"group deny wins", Sets{Identity: []*Policy{rw, denyDelete}}, &Request{Action: "s3:DeleteObject", Resource: "arn:aws:s3:::b/k"}, false},
		{"session narrows", Sets{Identity: []*Policy{rw}, Session: onlyB}, get("arn:aws:s3:::other/k"), false},
		{"session within", Sets{Identity: []*Policy{rw}, Session: onlyB}, get("arn:aws:s3:::b/k"), true},
		{"session cannot widen", Sets{Identity: []*Policy{ro}, Session: rw}, &Request{Action: "s3:PutObject", Resource: "arn:aws:s3:::b/k"}, false},
		{"bucket policy grants user", Sets{Bucket: bucketAlice}, get("arn:aws:s3:::c/k"), true},
		{"bucket policy other user", Sets{Bucket: bucketAlice}, &Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::c/k", Username: "bob"}, false},
		{"bucket deny beats identity", Sets{Identity: []*Policy{rw}, Bucket: bucketDenyAll}, get("arn:aws:s3:::c/secret/k"), false},
	}
	for _, c := range cases {
		if got := Authorize(c.sets, c.req); got != c.want {
			t.Errorf("%s: Authorize = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, doc, want string
	}{
		{"not json", `{`, "not a JSON policy document"},
		{"no statement", `{"Version":"2012-10-17"}`, "Statement: missing"},
		{"bad version", `{"Version":"2020-01-01","Statement":[]}`, "Version: unsupported"},
		{"unknown field", `{"Version":"2012-10-17","Statment":[]}`, "unknown field"},
		{"bad effect", `{"Statement":[{"Effect":"Maybe","Action":"s3:*","Resource":"*"}]}`, "Statement[0].Effect"},
		{"unknown action", `{"Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"},{"Effect":"Allow","Action":"s3:GetObjekt","Resource":"*"}]}`, `Statement[1].Action: unknown action "s3:GetObjekt"`},
		{"unknown service", `{"Statement":[{"Effect":"Allow","Action":"ec2:*","Resource":"*"}]}`, "unknown action"},
		{"both actions", `{"Statement":[{"Effect":"Allow","Action":"s3:*","NotAction":"s3:GetObject","Resource":"*"}]}`, "exclusive"},
		{"no action", `{"Statement":[{"Effect":"Allow","Resource":"*"}]}`, "Statement[0].Action: missing"},
		{"no resource", `{"Statement":[{"Effect":"Allow","Action":"s3:*"}]}`, "Statement[0].Resource: missing"},
		{"bad resource", `{"Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"bucket/*"}]}`, "not an ARN"},
		{"bad operator", `{"Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*","Condition":{"StringSorta":{"s3:prefix":"a"}}}]}`, `Condition.StringSorta: unknown condition operator`},
		{"bad ip", `{"Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*","Condition":{"IpAddress":{"aws:SourceIp":"300.1.1.1"}}}]}`, "Condition.IpAddress.aws:SourceIp"},
		{"bad number", `{"Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*","Condition":{"NumericLessThan":{"s3:max-keys":"ten"}}}]}`, "not a number"},
		{"bad date", `{"Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*","Condition":{"DateLessThan":{"aws:CurrentTime":"tomorrow"}}}]}`, "not a date"},
		{"unterminated var", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"arn:aws:s3:::b/${aws:username"}]}`, "unterminated"},
		{"principal in identity", `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:*","Resource":"*"}]}`, "Statement[0].Principal: not allowed"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.doc))
		if err == nil || !errors.Is(err, ErrInvalidPolicy) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want ErrInvalidPolicy containing %q", c.name, err, c.want)
		}
	}
	if _, err := ParseBucket([]byte(`{"Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}`)); err == nil || !strings.Contains(err.Error(), "Statement[0].Principal: missing") {
		t.Errorf("bucket policy without principal: %v", err)
	}
}

func TestBuiltins(t *testing.T) {
	cases := []struct {
		policy, action, resource string
		want                     Decision
	}{
		{"readonly", "s3:GetObject", "arn:aws:s3:::b/k", Allow},
		{"readonly", "s3:PutObject", "arn:aws:s3:::b/k", NoDecision},
		{"readwrite", "s3:DeleteBucket", "arn:aws:s3:::b", Allow},
		{"readwrite", "admin:ServerInfo", "arn:aws:s3:::*", NoDecision},
		{"writeonly", "s3:PutObject", "arn:aws:s3:::b/k", Allow},
		{"writeonly", "s3:GetObject", "arn:aws:s3:::b/k", NoDecision},
		{"diagnostics", "admin:ServerTrace", "arn:aws:s3:::*", Allow},
		{"diagnostics", "admin:CreateUser", "arn:aws:s3:::*", NoDecision},
		{"consoleAdmin", "admin:CreateUser", "arn:aws:s3:::*", Allow},
		{"consoleAdmin", "s3tables:CreateTable", "arn:aws:s3tables:::bucket/w/table/u", Allow},
		{"tablesReadOnly", "s3tables:GetTable", "arn:aws:s3tables:::bucket/w/table/u", Allow},
		{"tablesReadOnly", "s3tables:CreateTable", "arn:aws:s3tables:::bucket/w", NoDecision},
		{"tablesReadWrite", "s3tables:CreateTable", "arn:aws:s3tables:::bucket/w", Allow},
		{"tablesReadWrite", "s3:GetObject", "arn:aws:s3:::w/k", NoDecision},
	}
	for _, c := range cases {
		p := Builtin[c.policy]
		if got := Evaluate([]*Policy{p}, &Request{Action: c.action, Resource: c.resource}); got != c.want {
			t.Errorf("%s %s %s = %v, want %v", c.policy, c.action, c.resource, got, c.want)
		}
	}
	if n := BuiltinNames(); len(n) != 7 {
		t.Errorf("BuiltinNames = %v", n)
	}
}

func TestWildcardMatch(t *testing.T) {
	cases := []struct {
		p, s string
		want bool
	}{
		{"*", "", true}, {"a*", "abc", true}, {"a?c", "abc", true}, {"a?c", "ac", false},
		{"*b*", "abc", true}, {"a*c*e", "abcde", true}, {"a*c*e", "abcdf", false},
		{"arn:aws:s3:::b/*", "arn:aws:s3:::b", false}, {"", "", true}, {"", "a", false},
		{"**a", "xa", true}, {"a*", "A", false},
	}
	for _, c := range cases {
		if got := wildcardMatch(c.p, c.s); got != c.want {
			t.Errorf("wildcardMatch(%q, %q) = %v", c.p, c.s, got)
		}
	}
}

func BenchmarkEvaluate(b *testing.B) {
	p := MustParse(homeDirPolicy)
	ps := []*Policy{Builtin["readonly"], p}
	r := &Request{Action: "s3:PutObject", Resource: "arn:aws:s3:::bucket-name/home/alice/x", Username: "alice"}
	b.ReportAllocs()
	for b.Loop() {
		if Evaluate(ps, r) != Allow {
			b.Fatal("denied")
		}
	}
}

// TestTablesActionAliases: the warehouse-level s3tables actions have two
// spellings (AIStor's Warehouse, AWS's TableBucket); a statement naming one,
// or matching one with wildcards, covers the other, for Allow, Deny and
// NotAction alike, and no other action.
func TestTablesActionAliases(t *testing.T) {
	doc := func(effect, field, actions string) string {
		return `{"Version":"2012-10-17","Statement":[{"Effect":"` + effect + `","` + field + `":` + actions +
			`,"Resource":"arn:aws:s3tables:::bucket/*"}]}`
	}
	allowAll := `{"Effect":"Allow","Action":"s3tables:*","Resource":"*"}`
	denyWith := func(actions string) string {
		return `{"Version":"2012-10-17","Statement":[` + allowAll + `,{"Effect":"Deny","Action":` + actions +
			`,"Resource":"arn:aws:s3tables:::bucket/*"}]}`
	}
	const res = "arn:aws:s3tables:::bucket/lake"
	cases := []struct {
		name, policy, action string
		want                 Decision
	}{
		{"create warehouse allows table bucket", doc("Allow", "Action", `"s3tables:CreateWarehouse"`), "s3tables:CreateTableBucket", Allow},
		{"create table bucket allows warehouse", doc("Allow", "Action", `"s3tables:CreateTableBucket"`), "s3tables:CreateWarehouse", Allow},
		{"create warehouse allows itself", doc("Allow", "Action", `"s3tables:CreateWarehouse"`), "s3tables:CreateWarehouse", Allow},
		{"case-insensitive alias", doc("Allow", "Action", `"S3Tables:createwarehouse"`), "s3tables:CreateTableBucket", Allow},
		{"create does not allow delete", doc("Allow", "Action", `"s3tables:CreateWarehouse"`), "s3tables:DeleteTableBucket", NoDecision},
		{"create does not allow tables", doc("Allow", "Action", `"s3tables:CreateTableBucket"`), "s3tables:CreateTable", NoDecision},
		{"wildcard *Warehouse covers table bucket", doc("Allow", "Action", `"s3tables:*Warehouse"`), "s3tables:DeleteTableBucket", Allow},
		{"wildcard *TableBucket covers warehouse", doc("Allow", "Action", `"s3tables:*TableBucket"`), "s3tables:CreateWarehouse", Allow},
		{"wildcard *TableBucket not plural list", doc("Allow", "Action", `"s3tables:*TableBucket"`), "s3tables:ListWarehouses", NoDecision},
		{"list pair", doc("Allow", "Action", `"s3tables:ListWarehouses"`), "s3tables:ListTableBuckets", Allow},
		{"get pair", doc("Allow", "Action", `"s3tables:GetTableBucket"`), "s3tables:GetWarehouse", Allow},
		{"get warehouse is not get table", doc("Allow", "Action", `"s3tables:GetWarehouse"`), "s3tables:GetTable", NoDecision},
		{"deny warehouse denies table bucket", denyWith(`"s3tables:CreateWarehouse"`), "s3tables:CreateTableBucket", Deny},
		{"deny table bucket denies warehouse", denyWith(`"s3tables:CreateTableBucket"`), "s3tables:CreateWarehouse", Deny},
		{"deny create leaves tables", denyWith(`"s3tables:CreateTableBucket"`), "s3tables:CreateTable", Allow},
		{"notaction excludes the alias too", doc("Allow", "NotAction", `"s3tables:CreateWarehouse"`), "s3tables:CreateTableBucket", NoDecision},
		{"notaction excludes the name", doc("Allow", "NotAction", `"s3tables:CreateTableBucket"`), "s3tables:CreateWarehouse", NoDecision},
		{"notaction allows the rest", doc("Allow", "NotAction", `"s3tables:CreateTableBucket"`), "s3tables:DeleteWarehouse", Allow},
		{"star covers both", doc("Allow", "Action", `"*"`), "s3tables:CreateWarehouse", Allow},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Parse([]byte(c.policy))
			if err != nil {
				t.Fatal(err)
			}
			if got := Evaluate([]*Policy{p}, &Request{Action: c.action, Resource: res}); got != c.want {
				t.Fatalf("Evaluate(%s) = %v, want %v", c.action, got, c.want)
			}
			if string(p.JSON()) != c.policy {
				t.Fatalf("the stored document changed: %s", p.JSON())
			}
		})
	}
}
