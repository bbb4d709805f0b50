package tablecmd

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// icebergTypes are the primitive types --schema accepts by name.
var icebergTypes = map[string]bool{
	"boolean": true, "int": true, "long": true, "float": true, "double": true, "date": true, "time": true,
	"timestamp": true, "timestamptz": true, "string": true, "uuid": true, "binary": true,
}

var (
	decimalType = regexp.MustCompile(`^decimal\(\d+,\s*\d+\)$`)
	fixedType   = regexp.MustCompile(`^fixed\[\d+\]$`)
	// partitionExpr is col, transform(col) or transform(n,col).
	partitionExpr = regexp.MustCompile(`^(?:([a-z]+)\((?:(\d+),)?([^()]+)\)|([^()]+))$`)
)

type schemaField struct {
	ID       int    `json:"id"`
	Name     string `json:"name"`
	Type     string `json:"type"`
	Required bool   `json:"required"`
}

// parseSchema turns --schema into Iceberg schema JSON: 'name:type,...'
// (a '!' after the type makes the column required), or a JSON file when the
// value ends in .json, or inline JSON when it starts with '{'.
func parseSchema(spec string) (json.RawMessage, []schemaField, error) {
	spec = strings.TrimSpace(spec)
	if strings.HasPrefix(spec, "{") || strings.HasSuffix(spec, ".json") {
		data := []byte(spec)
		if !strings.HasPrefix(spec, "{") {
			var err error
			if data, err = os.ReadFile(spec); err != nil {
				return nil, nil, fmt.Errorf("--schema: %w", err)
			}
		}
		var s struct {
			Fields []schemaField `json:"fields"`
		}
		if err := json.Unmarshal(data, &s); err != nil || len(s.Fields) == 0 {
			return nil, nil, fmt.Errorf("--schema: not an Iceberg schema JSON with fields")
		}
		return data, s.Fields, nil
	}
	var fields []schemaField
	for i, col := range strings.Split(spec, ",") {
		name, typ, ok := strings.Cut(strings.TrimSpace(col), ":")
		typ = strings.ToLower(strings.TrimSpace(typ))
		required := strings.HasSuffix(typ, "!")
		typ = strings.TrimSuffix(typ, "!")
		if !ok || name == "" || !(icebergTypes[typ] || decimalType.MatchString(typ) || fixedType.MatchString(typ)) {
			return nil, nil, fmt.Errorf("--schema column %q: want name:type with type one of boolean, int, long, float, double, date, time, timestamp, timestamptz, string, uuid, binary, decimal(P,S), fixed[N]", col)
		}
		fields = append(fields, schemaField{ID: i + 1, Name: name, Type: typ, Required: required})
	}
	data, err := json.Marshal(map[string]any{"type": "struct", "schema-id": 0, "fields": fields})
	return data, fields, err
}

// parsePartition turns --partition 'col,day(ts),bucket(16,id)' into an
// Iceberg partition spec JSON over the schema's fields.
func parsePartition(spec string, fields []schemaField) (json.RawMessage, error) {
	type pfield struct {
		SourceID  int    `json:"source-id"`
		FieldID   int    `json:"field-id"`
		Name      string `json:"name"`
		Transform string `json:"transform"`
	}
	var out []pfield
	for i, expr := range splitTopLevel(spec) {
		m := partitionExpr.FindStringSubmatch(strings.TrimSpace(expr))
		if m == nil {
			return nil, fmt.Errorf("--partition %q: want col, transform(col) or transform(N,col)", expr)
		}
		transform, col := m[1], strings.TrimSpace(m[3])
		if transform == "" {
			transform, col = "identity", strings.TrimSpace(m[4])
		}
		if m[2] != "" {
			transform += "[" + m[2] + "]"
		}
		src := 0
		for _, f := range fields {
			if f.Name == col {
				src = f.ID
			}
		}
		if src == 0 {
			return nil, fmt.Errorf("--partition %q: no column %q in the schema", expr, col)
		}
		name := col
		if m[1] != "" {
			name = col + "_" + m[1]
		}
		out = append(out, pfield{SourceID: src, FieldID: 1000 + i, Name: name, Transform: transform})
	}
	return json.Marshal(map[string]any{"spec-id": 0, "fields": out})
}

// splitTopLevel splits on commas outside parentheses.
func splitTopLevel(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}
