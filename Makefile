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
