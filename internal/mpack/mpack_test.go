package mpack

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// The values at every width boundary, read back by hand and by the
// reflective codec, and the reflective codec's encodings read by hand.
func TestIntsAtEveryWidth(t *testing.T) {
	var ns []int64
	for _, edge := range []int64{0, 31, 32, 127, 128, 255, 256, math.MaxInt16, math.MaxUint16, math.MaxInt32, math.MaxUint32, math.MaxInt64} {
		ns = append(ns, edge, -edge, edge+1, -edge-1)
	}
	ns = append(ns, math.MinInt64)
	for _, n := range ns {
		b := AppendInt(nil, n)
		got, rest, err := ReadInt(b)
		if err != nil || got != n || len(rest) != 0 {
			t.Errorf("%d: read back %d, %d bytes left, %v", n, got, len(rest), err)
		}
		var viaReflect int64
		if err := msgpack.Unmarshal(b, &viaReflect); err != nil || viaReflect != n {
			t.Errorf("%d: the reflective codec reads %d, %v", n, viaReflect, err)
		}
		for _, enc := range []any{n, int32(n), int16(n), int8(n), uint64(n)} {
			b := mustMarshal(t, enc)
			want := reflect.ValueOf(enc).Convert(reflect.TypeFor[int64]()).Int()
			if got, _, err := ReadInt(b); err != nil || got != want {
				t.Errorf("%T(%d) written by the reflective codec reads as %d, %v", enc, want, got, err)
			}
		}
	}
}

func TestStringsAndBytesAtEveryWidth(t *testing.T) {
	for _, n := range []int{0, 1, 31, 32, 255, 256, math.MaxUint16, math.MaxUint16 + 1} {
		s := strings.Repeat("s", n)
		b := AppendString(nil, s)
		if got, rest, err := ReadString(b); err != nil || got != s || len(rest) != 0 {
			t.Errorf("string of %d: read back %d bytes, %d left, %v", n, len(got), len(rest), err)
		}
		var viaReflect string
		if err := msgpack.Unmarshal(b, &viaReflect); err != nil || viaReflect != s {
			t.Errorf("string of %d: the reflective codec reads %d bytes, %v", n, len(viaReflect), err)
		}
		p := []byte(s)
		b = AppendBytes(nil, p)
		got, _, err := ReadBytes(b)
		var pViaReflect []byte
		if err2 := msgpack.Unmarshal(b, &pViaReflect); err != nil || err2 != nil || !bytes.Equal(got, p) || !reflect.DeepEqual(got, pViaReflect) {
			t.Errorf("bytes of %d: read back %d, by reflection %d: %v, %v", n, len(got), len(pViaReflect), err, err2)
		}
		// Strings and byte strings read each other's encodings, as the
		// reflective codec reads them.
		if got, _, err := ReadString(mustMarshal(t, p)); err != nil || got != s {
			t.Errorf("bin of %d read as a string: %d bytes, %v", n, len(got), err)
		}
		if got, _, err := ReadBytes(mustMarshal(t, s)); err != nil || string(got) != s {
			t.Errorf("str of %d read as bytes: %d bytes, %v", n, len(got), err)
		}
	}
	if got, _, err := ReadBytes(AppendBytes(nil, nil)); err != nil || got != nil {
		t.Errorf("nil bytes read back as %#v, %v", got, err)
	}
}

func TestMapsAndArraysAtEveryWidth(t *testing.T) {
	for _, n := range []int{0, 15, 16, math.MaxUint16, math.MaxUint16 + 1} {
		m := make(map[string]string, n)
		for i := range n {
			m[string(AppendInt(nil, int64(i)))] = "v"
		}
		b := AppendStringMap(nil, m)
		got, rest, err := ReadStringMap(b)
		if err != nil || len(rest) != 0 || !reflect.DeepEqual(got, m) {
			t.Errorf("map of %d: read back %d entries, %d bytes left, %v", n, len(got), len(rest), err)
		}
		var viaReflect map[string]string
		if err := msgpack.Unmarshal(b, &viaReflect); err != nil || !reflect.DeepEqual(viaReflect, m) {
			t.Errorf("map of %d: the reflective codec reads %d entries, %v", n, len(viaReflect), err)
		}
		b = AppendArrayHeader(nil, n)
		for range n {
			b = AppendBool(b, true)
		}
		var arr []bool
		if err := msgpack.Unmarshal(b, &arr); err != nil || len(arr) != n {
			t.Errorf("array of %d: the reflective codec reads %d, %v", n, len(arr), err)
		}
		if c, rest, err := ReadArrayHeader(b); err != nil || c != n || len(rest) != n {
			t.Errorf("array of %d: header reads %d, %v", n, c, err)
		}
	}
	if got, _, err := ReadStringMap(AppendStringMap(nil, nil)); err != nil || got != nil {
		t.Errorf("nil map read back as %#v, %v", got, err)
	}
}

// TestFieldsLeaveOutEmptyValues: a map of fields reads, through the
// reflective codec, as the struct it was written for, and its empty
// omitempty fields are not written at all.
func TestFieldsLeaveOutEmptyValues(t *testing.T) {
	type rec struct {
		A string            `msgpack:"a"`
		B int64             `msgpack:"b,omitempty"`
		C bool              `msgpack:"c,omitempty"`
		D []byte            `msgpack:"d,omitempty"`
		E map[string]string `msgpack:"e,omitempty"`
		F string            `msgpack:"f,omitempty"`
	}
	for _, want := range []rec{{}, {A: "x", B: -5, C: true, D: []byte{1}, E: map[string]string{"k": "v"}, F: "f"}} {
		f := StartFields(nil)
		f.Key("a")
		f.B = AppendString(f.B, want.A)
		f.Int("b", want.B)
		f.Bool("c", want.C)
		f.Bytes("d", want.D)
		f.StringMap("e", want.E)
		f.String("f", want.F)
		b := f.End()
		var got rec
		if err := msgpack.Unmarshal(b, &got); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%+v read back as %+v, %v", want, got, err)
		}
		if want.A == "" && len(b) != 3+2+1 { // the header, "a", ""
			t.Errorf("an empty record took %d bytes: % x", len(b), b)
		}
		var names []string
		if _, err := ReadFields(b, func(k, b []byte) ([]byte, error) {
			names = append(names, string(k))
			return Skip(b)
		}); err != nil {
			t.Fatal(err)
		}
		if want.A == "" && !reflect.DeepEqual(names, []string{"a"}) || want.A != "" && len(names) != 6 {
			t.Errorf("%+v has the fields %v", want, names)
		}
	}
}

// TestSkipStepsOverEveryType: Skip steps over what the reflective codec
// writes for every kind of value, ext types and floats among them.
func TestSkipStepsOverEveryType(t *testing.T) {
	values := []any{nil, true, 1.5, float32(2.5), -1, uint64(math.MaxUint64), "s", strings.Repeat("x", 300),
		[]byte{1, 2}, []any{1, "a", []any{}}, map[string]any{"a": map[string]any{"b": []int{1}}},
		time.Unix(1, 5), time.Unix(1<<40, 0), msgpack.RawMessage{0xd4, 1, 2}, msgpack.RawMessage{0xd8, 1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
		msgpack.RawMessage{0xc7, 3, 9, 1, 2, 3}, msgpack.RawMessage{0xc8, 0, 1, 9, 1}}
	for _, v := range values {
		b := append(mustMarshal(t, v), 0xc3)
		rest, err := Skip(b)
		if err != nil || !bytes.Equal(rest, []byte{0xc3}) {
			t.Errorf("%#v: Skip left % x, %v", v, rest, err)
		}
	}
}

// TestReadersRefuseShortAndWrongInput: every cut short input is ErrShort,
// a count the input cannot hold is refused before anything is sized by
// it, and a value of another type is an error naming its code.
func TestReadersRefuseShortAndWrongInput(t *testing.T) {
	whole := [][]byte{AppendInt(nil, math.MinInt64), AppendString(nil, strings.Repeat("s", 300)), AppendBytes(nil, make([]byte, 70000)),
		AppendStringMap(nil, map[string]string{"k": "v"}), mustMarshal(t, map[string]any{"a": []any{1.5, time.Unix(1, 1)}})}
	for _, b := range whole {
		for n := range len(b) {
			if _, err := Skip(b[:n]); !errors.Is(err, ErrShort) {
				t.Errorf("% x cut at %d: Skip says %v", b[:min(len(b), 8)], n, err)
			}
		}
	}
	for _, b := range [][]byte{{0xdf, 0xff, 0xff, 0xff, 0xff}, {0xdd, 0xff, 0xff, 0xff, 0xff, 0xc0}, {0xde, 0x00, 0x02, 0xa0, 0xa0}} {
		if _, _, err := ReadMapHeader(b); err == nil && b[0] == 0xdf {
			t.Errorf("% x: a map of 2³² entries in 5 bytes was accepted", b)
		}
		if _, err := Skip(b); !errors.Is(err, ErrShort) {
			t.Errorf("% x: Skip says %v", b, err)
		}
	}
	if _, _, err := ReadInt([]byte{0xa1, 'x'}); err == nil || !strings.Contains(err.Error(), "0xa1") {
		t.Errorf("a string read as an integer: %v", err)
	}
	if _, _, err := ReadString([]byte{0x01}); err == nil {
		t.Error("an integer read as a string")
	}
	if _, _, err := ReadBool([]byte{0x01}); err == nil {
		t.Error("an integer read as a boolean")
	}
	if _, err := Skip([]byte{0xc1}); err == nil {
		t.Error("the never-used code 0xc1 was skipped")
	}
	deep := bytes.Repeat([]byte{0x91}, maxDepth+2)
	if _, err := Skip(append(deep, 0xc0)); err == nil || errors.Is(err, ErrShort) {
		t.Errorf("nesting %d deep: %v", len(deep), err)
	}
}

// FuzzSkip: Skip steps over exactly what the reflective codec's Skip
// steps over, on any input either accepts (the reflective one is given
// only input Skip accepts: it sizes by counts it reads, unchecked).
func FuzzSkip(f *testing.F) {
	for _, v := range []any{map[string]any{"a": []any{1.5, "x", nil}}, time.Unix(1, 1), []byte{1}, -70000} {
		f.Add(mustMarshal(f, v))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		rest, err := Skip(b)
		if err != nil {
			return
		}
		d := msgpack.NewDecoder(bytes.NewReader(b))
		if err := d.Skip(); err != nil {
			t.Fatalf("% x: Skip stepped over %d bytes, the reflective codec refuses it: %v", b, len(b)-len(rest), err)
		}
		if n := d.Buffered().(*bytes.Reader).Len(); n != len(rest) {
			t.Fatalf("% x: Skip left %d bytes, the reflective codec %d", b, len(rest), n)
		}
		// The readers never panic on it either.
		_, _, _ = ReadStringMap(b)
		_, _ = ReadFields(b, func(_, b []byte) ([]byte, error) { return Skip(b) })
	})
}

func mustMarshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
