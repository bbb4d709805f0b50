package policy

import "sort"

// Builtin names the policies every site has. They keep MinIO's names and
// meaning, plus two for the Tables catalog; they cannot be changed or
// removed.
var Builtin = map[string]*Policy{
	"readonly": MustParse(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow",
		"Action":["s3:GetBucketLocation","s3:GetObject"],"Resource":["arn:aws:s3:::*"]}]}`),
	"readwrite": MustParse(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow",
		"Action":["s3:*"],"Resource":["arn:aws:s3:::*"]}]}`),
	"writeonly": MustParse(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow",
		"Action":["s3:PutObject"],"Resource":["arn:aws:s3:::*"]}]}`),
	"diagnostics": MustParse(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow",
		"Action":["admin:ServerTrace","admin:Profiling","admin:ConsoleLog","admin:ServerInfo",
		"admin:TopLocksInfo","admin:OBDInfo","admin:BandwidthMonitor","admin:Prometheus"],
		"Resource":["arn:aws:s3:::*"]}]}`),
	"consoleAdmin": MustParse(`{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Action":["admin:*"],"Resource":["*"]},
		{"Effect":"Allow","Action":["sts:*"],"Resource":["*"]},
		{"Effect":"Allow","Action":["s3:*"],"Resource":["arn:aws:s3:::*"]},
		{"Effect":"Allow","Action":["s3tables:*"],"Resource":["arn:aws:s3tables:::*"]}]}`),
	"tablesReadOnly": MustParse(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow",
		"Action":["s3tables:Get*","s3tables:List*"],"Resource":["arn:aws:s3tables:::*"]}]}`),
	"tablesReadWrite": MustParse(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow",
		"Action":["s3tables:*"],"Resource":["arn:aws:s3tables:::*"]}]}`),
}

// BuiltinNames returns the built-in policy names, sorted.
func BuiltinNames() []string {
	names := make([]string, 0, len(Builtin))
	for n := range Builtin {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
