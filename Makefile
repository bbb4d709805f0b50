.PHONY: build test vet fuzz
build:
	go build -o bin/twinlake ./cmd/twinlake
test:
	go test ./...
vet:
	go vet ./...
# Short fuzz runs of every parser of outside input.
fuzz:
	go test -run='^$$' -fuzz=FuzzParseAuthorization -fuzztime=30s ./internal/s3api/sigv4/
	go test -run='^$$' -fuzz=FuzzChunkedReader -fuzztime=30s ./internal/s3api/sigv4/
	go test -run='^$$' -fuzz=FuzzFromHeaders -fuzztime=30s ./internal/checksum/
	go test -run='^$$' -fuzz=FuzzDecrypt -fuzztime=30s ./internal/blob/sse/
	go test -run='^$$' -fuzz=FuzzDecodeXML -fuzztime=30s ./internal/s3api/
	go test -run='^$$' -fuzz=FuzzDecodeVersionHeader -fuzztime=30s ./internal/replication/peerhttp/
	go test -run='^$$' -fuzz=FuzzDecodeBatch -fuzztime=30s ./internal/replication/peerhttp/
	go test -run='^$$' -fuzz=FuzzDecodeIAM -fuzztime=30s ./internal/replication/peerhttp/
	go test -run='^$$' -fuzz=FuzzParseRecord -fuzztime=30s ./internal/catalog/
	go test -run='^$$' -fuzz=FuzzDecodeBody -fuzztime=30s ./internal/catalog/rest/
	go test -run='^$$' -fuzz=FuzzParseTraceQuery -fuzztime=30s ./internal/admin/
	go test -run='^$$' -fuzz=FuzzParseKV -fuzztime=30s ./internal/config/
	go test -run='^$$' -fuzz=FuzzParsePolicy -fuzztime=30s ./internal/iam/policy/
