package rest

import (
	"testing"
)

// FuzzDecodeBody feeds arbitrary bodies to the request decoders of every
// endpoint that takes one: none may panic, and a rejected body is always a
// BadRequest.
func FuzzDecodeBody(f *testing.F) {
	for _, seed := range []string{
		`{"namespace":["a"],"properties":{"k":"v"}}`,
		`{"name":"t","schema":{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"x","type":"long","required":false}]},"partition-spec":{"spec-id":0,"fields":[{"source-id":1,"field-id":1000,"name":"x","transform":"bucket[4]"}]}}`,
		`{"requirements":[{"type":"assert-create"}],"updates":[{"action":"set-properties","updates":{"a":"b"}}]}`,
		`{"table-changes":[{"identifier":{"namespace":["a"],"name":"t"},"requirements":[],"updates":[{"action":"remove-properties","removals":["a"]}]}]}`,
		`{"source":{"namespace":["a"],"name":"t"},"destination":{"namespace":["b"],"name":"u"}}`,
		`{"updates":[{"action":"explode"}]}`, `[`, `null`, `{"a":1} x`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, v := range []any{
			&namespaceBody{}, &updatePropertiesRequest{}, &createTableRequest{}, &commitTableRequest{},
			&commitTransactionRequest{}, &renameRequest{}, &registerTableRequest{}, &createViewRequest{}, &commitViewRequest{},
		} {
			if err := decodeBody(body, v); err != nil {
				if body, _ := classify(err); body.Error.Code != 400 {
					t.Fatalf("decode error classified as %d: %v", body.Error.Code, err)
				}
			}
		}
	})
}
