package catalog

import (
	"reflect"
	"testing"
)

func TestIdentityRecordShapes(t *testing.T) {
	ns := Record{Kind: KindNamespace, Namespace: []string{"a", "b"}, Properties: map[string]string{"k": "v"}, UpdatedMS: 5}
	data, err := ns.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"kind":"namespace","namespace":["a","b"],"properties":{"k":"v"},"deleted":false,"updated_ms":5}`; string(data) != want {
		t.Errorf("namespace record = %s\nwant %s", data, want)
	}
	tbl := Record{Kind: KindTable, Namespace: []string{"a"}, Name: "t", UUID: "u", Location: "s3://w/a/t",
		MetadataLocation: "s3://w/a/t/metadata/00003-x.metadata.json", Version: 3, UpdatedMS: 7,
		Txn: &TxnInfo{ID: "x", Members: []TxnMember{{Namespace: []string{"a"}, Name: "t", Version: 3}}}}
	data, err = tbl.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"kind":"table","namespace":["a"],"name":"t","uuid":"u","location":"s3://w/a/t","metadata_location":"s3://w/a/t/metadata/00003-x.metadata.json","version":3,"deleted":false,"updated_ms":7,"txn":{"id":"x","members":[{"namespace":["a"],"name":"t","version":3}]}}`
	if string(data) != want {
		t.Errorf("table record = %s\nwant %s", data, want)
	}
	for _, r := range []Record{ns, tbl} {
		data, _ := r.MarshalJSON()
		back, err := ParseRecord(data)
		if err != nil || !reflect.DeepEqual(back, r) {
			t.Errorf("round trip of %s: %+v, %v", data, back, err)
		}
	}
}

func TestIdentityRecordKeys(t *testing.T) {
	for _, c := range []struct {
		kind string
		ns   []string
		name string
		key  string
	}{
		{KindNamespace, []string{"a", "b c"}, "", ".twinlake/catalog/namespaces/a/b%20c/.namespace.json"},
		{KindTable, []string{"a"}, "t?x", ".twinlake/catalog/tables/a/t%3Fx.json"},
		{KindView, []string{"a", "b"}, "v", ".twinlake/catalog/views/a/b/v.json"},
	} {
		r := Record{Kind: c.kind, Namespace: c.ns, Name: c.name}
		key, err := r.Key()
		if err != nil || key != c.key {
			t.Errorf("key = %q, %v; want %q", key, err, c.key)
		}
		kind, ns, name, err := ParseRecordKey(key)
		if err != nil || kind != c.kind || !reflect.DeepEqual(ns, c.ns) || name != c.name {
			t.Errorf("ParseRecordKey(%q) = %s %v %q %v", key, kind, ns, name, err)
		}
	}
	for _, bad := range []string{"x/y.json", ".twinlake/catalog/other/a.json", ".twinlake/catalog/tables/t.json", ".twinlake/catalog/namespaces/a/x.json"} {
		if _, _, _, err := ParseRecordKey(bad); err == nil {
			t.Errorf("ParseRecordKey(%q) accepted", bad)
		}
	}
}

func TestParseRecordRejects(t *testing.T) {
	for _, bad := range []string{
		``, `[]`, `{"kind":"nope"}`, `{"kind":"namespace","namespace":[]}`,
		`{"kind":"table","namespace":["a"],"name":"t","metadata_location":"m","version":1}`,
		`{"kind":"table","namespace":["a"],"name":"t","uuid":"u","version":1}`,
		`{"kind":"table","namespace":["a"],"name":"t","uuid":"u","metadata_location":"m","version":-1}`,
		`{"kind":"table","namespace":["a"],"name":"t","uuid":"u","metadata_location":"m","version":1,"txn":{"id":"x","members":[{"namespace":["a"],"name":"o","version":1}]}}`,
		`{"kind":"view","namespace":["a\u0000"],"name":"v","uuid":"u","metadata_location":"m"}`,
	} {
		if _, err := ParseRecord([]byte(bad)); err == nil {
			t.Errorf("ParseRecord(%s) accepted", bad)
		}
	}
}

// FuzzParseRecord: the parser never panics, and what it accepts re-encodes
// to a record it accepts again, equal to the first.
func FuzzParseRecord(f *testing.F) {
	f.Add([]byte(`{"kind":"namespace","namespace":["a","b"],"properties":{"k":"v"},"deleted":false,"updated_ms":5}`))
	f.Add([]byte(`{"kind":"table","namespace":["a"],"name":"t","uuid":"u","location":"s3://w/a/t","metadata_location":"s3://w/a/t/metadata/00003-x.metadata.json","version":3,"deleted":true,"updated_ms":7,"txn":{"id":"x","members":[{"namespace":["a"],"name":"t","version":3}]}}`))
	f.Add([]byte(`{"kind":"view","namespace":["a"],"name":"v","uuid":"u","metadata_location":"m","version":0}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseRecord(data)
		if err != nil {
			return
		}
		again, err := r.MarshalJSON()
		if err != nil {
			t.Fatalf("accepted record does not encode: %v", err)
		}
		r2, err := ParseRecord(again)
		if err != nil || !reflect.DeepEqual(r, r2) {
			t.Fatalf("round trip differs: %+v vs %+v (%v)", r, r2, err)
		}
		if _, err := r.Key(); err != nil {
			t.Fatalf("accepted record has no key: %v", err)
		}
	})
}
