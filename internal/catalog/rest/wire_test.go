package rest

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/twinlake/twinlake/internal/catalogwire"
)

// jsonNames lists the JSON member names of a struct type's fields.
func jsonNames(t reflect.Type) []string {
	var names []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			name = f.Name
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// The requests the server decodes into iceberg-go's types spell their
// members as the shared wire types do, so twinlake's client and the server
// cannot drift apart.
func TestWireAgreesWithCatalogwire(t *testing.T) {
	for _, tt := range []struct {
		server, wire any
	}{
		{createTableRequest{}, catalogwire.CreateTable{}},
		{commitTableRequest{}, catalogwire.CommitTable{}},
		{createViewRequest{}, catalogwire.CreateView{}},
	} {
		s, w := reflect.TypeOf(tt.server), reflect.TypeOf(tt.wire)
		if got, want := jsonNames(s), jsonNames(w); !slices.Equal(got, want) {
			t.Errorf("%s members %v, catalogwire.%s has %v", s.Name(), got, w.Name(), want)
		}
	}
}
