package main

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kcbor "k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"

	"github.com/watchwire/watchwire/tools/refgen/kinds"
	"github.com/watchwire/watchwire/tools/refgen/realistic"
)

// ---------------------------------------------------------------------------------------------------------------
// FieldsV1 holding CBOR

// fieldsV1Vectors: FieldsV1 bytes to json.Marshal(FieldsV1). Since Kubernetes can store objects as CBOR, a FieldsV1
// may hold CBOR (its first byte says which: a CBOR map, tag or null), which its MarshalJSON turns into JSON through
// Kubernetes' CBOR decoder (k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct) and encoding/json. Inputs:
// FieldsV1 JSON of managed-fields shape turned into CBOR by FieldsV1.MarshalCBOR; random values encoded by
// direct.Marshal; hand-written CBOR (every major type, indefinite lengths, tags, floats, simple values, faults);
// random CBOR from a grammar wider than what Kubernetes writes; and damaged copies of all of these.
func fieldsV1Vectors() []map[string]any {
	var inputs [][]byte
	add := func(hexes ...string) { inputs = append(inputs, hexInputs(hexes...)...) }
	// Hand-written: null, empty maps (definite, indefinite), nested, every kind of value, tags, faults.
	add("f6", "a0", "bfff", "a1 61 61 a0", "bf 61 61 a0 ff", "a1 7f 61 61 61 62 ff a0", "a1 60 a0",
		"a1 61 61 00", "a1 61 61 17", "a1 61 61 18 18", "a1 61 61 19 0100", "a1 61 61 1a 00010000",
		"a1 61 61 1b 0000000100000000", "a1 61 61 1b 7fffffffffffffff", "a1 61 61 1b 8000000000000000",
		"a1 61 61 20", "a1 61 61 38 ff", "a1 61 61 3b 7fffffffffffffff", "a1 61 61 3b 8000000000000000",
		"a1 61 61 f4", "a1 61 61 f5", "a1 61 61 f6", "a1 61 61 f7", "a1 61 61 e0", "a1 61 61 f0", "a1 61 61 f8 20",
		"a1 61 61 f8 18", "a1 61 61 f8 ff", "a1 61 61 f9 3c00", "a1 61 61 f9 0001", "a1 61 61 f9 7bff",
		"a1 61 61 f9 7c00", "a1 61 61 f9 7e00", "a1 61 61 f9 8000", "a1 61 61 fa 47c35000", "a1 61 61 fa 7f800000",
		"a1 61 61 fb 3ff199999999999a", "a1 61 61 fb 7ff8000000000000", "a1 61 61 fb 8000000000000000",
		"a1 61 61 fb 4430000000000000", "a1 61 61 fb 3eb0c6f7a0b5ed8d", "a1 61 61 fb 0000000000000001",
		"a1 61 61 80", "a1 61 61 83 01 02 03", "a1 61 61 9f 01 9f ff ff", "a1 61 61 9f ff",
		"a1 61 61 62 c3a9", "a1 61 61 62 c328", "a1 61 61 7f 61 61 62 c3a9 ff", "a1 61 61 7f 61 c3 61 a9 ff",
		"a1 61 61 7f 41 61 ff", "a1 61 61 41 61", "a1 61 61 43 ffc328", "a1 61 61 5f 41 61 41 62 ff",
		"a1 61 61 d5 43 010203", "a1 61 61 d6 43 010203", "a1 61 61 d7 43 010203", "a1 61 61 d6 44 fbff0001",
		"a1 61 61 d5 83 41 01 41 02 41 03", "a1 61 61 d6 a1 61 62 41 ff",
		"a1 61 61 c0 74 323031332d30332d32315432303a30343a30305a", "a1 61 61 c0 78 19 323031332d30332d32315432303a30343a30302e352b30313a3030",
		"a1 61 61 c0 61 78", "a1 61 61 c1 1a 514b67b0", "a1 61 61 c1 fb 41d452d9ec200000", "a1 61 61 c1 3a 514b67af",
		"a1 61 61 c1 f9 3c00", "a1 61 61 c1 61 61",
		"a1 61 61 c2 41 01", "a1 61 61 c3 41 01", "a1 61 61 c4 82 21 19 6ab3", "a1 61 61 d8 20 6161",
		"a1 61 61 d9 d9f7 01", "d9 d9f7 a1 61 61 a0", "d9 d9f7 f6", "c6 a1 61 61 a0", "db 0000000000000001 a0",
		"d8 18 a0", "d5 a0", "d5 f6", "d8 18 f6", "a1 01 a0", "a1 41 61 a0", "a1 f6 a0",
		"a2 61 61 01 61 61 02", "a2 61 61 01 7f 61 61 ff 02", "a2 61 61 01 61 62 02", "bf 61 61 01 61 61 02 ff",
		"a1 61 61", "a1", "a1 61", "bf 61 61 01", "a1 61 61 01 00", "a1 61 61 01 ff", "a0 a0",
		"a1 61 61 1c", "a1 61 61 5f 61 61 ff", "a1 61 61 9f", "a1 61 61 1f",
		"a1 61 61 18 01", "a1 61 61 19 0001", "a1 61 61 5f ff", "a1 61 61 7f ff", "a1 61 61 bf ff", "a1 61 61 a1 61 62 c0 00",
		"a1 62 c3a9 a0", "a1 6c 663a6d65746164617461 a0", "a1 66 663a73706563 a1 61 2e a0")
	// Times: tag 0 texts Go's parser takes or refuses, tag 1 epochs at the year limits and with fractions.
	for _, t := range []string{"2013-03-21T20:04:00Z", "2013-03-21T20:04:00.5Z", "2013-03-21T20:04:00,5Z",
		"2013-03-21T20:04:00.123456789123Z", "2013-03-21T20:04:00.000000000Z", "2013-03-21T20:04:00.Z",
		"2013-03-21T2:04:00Z", "2013-03-21T20:4:00Z", "2013-03-21T20:04:0Z", "2013-3-21T20:04:00Z",
		"2013-03-21T20:04:00+01:00", "2013-03-21T20:04:00-00:00", "2013-03-21T20:04:00+00:60",
		"2013-03-21T20:04:00+23:59", "2013-03-21T20:04:00+23:60", "2013-03-21T20:04:00+24:00",
		"2013-03-21T20:04:00+25:00", "2013-03-21T20:04:00+01:61", "2013-03-21T20:04:00+0100", "2013-03-21T20:04:00+01",
		"2013-03-21T20:04:00 +01:00", "2013-03-21T20:04:00z", "2013-03-21t20:04:00Z", "2013-03-21 20:04:00Z",
		"2013-03-21T24:00:00Z", "2013-03-21T23:60:00Z", "2013-03-21T23:59:60Z", "2016-02-29T00:00:00Z",
		"2015-02-29T00:00:00Z", "2000-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "0000-02-29T00:00:00Z",
		"0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z", "0000-01-01T00:00:00+01:00", "2013-04-31T00:00:00Z",
		"2013-00-10T00:00:00Z", "2013-13-10T00:00:00Z", "2013-03-00T00:00:00Z", "+013-03-21T20:04:00Z",
		"20133-03-21T20:04:00Z", "2013-03-21T20:04:00ZZ", "2013-03-21T20:04:00", ""} {
		inputs = append(inputs, append([]byte{0xa1, 0x61, 'a', 0xc0, 0x78, byte(len(t))}, t...))
	}
	add("a1 61 61 c1 1b 0000003afff4417f", "a1 61 61 c1 1b 0000003afff44180", "a1 61 61 c1 3b 0000000e7791f6ff",
		"a1 61 61 c1 3b 0000000e7791f700", "a1 61 61 c1 fb bfe0000000000000", "a1 61 61 c1 fb 3ff199999999999a",
		"a1 61 61 c1 fb c1d452d9ec200000", "a1 61 61 c1 fa 4e9502f9", "a1 61 61 c1 f9 7bff", "a1 61 61 c1 f9 fbff",
		"a1 61 61 c1 fb 43e0000000000000", "a1 61 61 c1 fb c3e0000000000001", "a1 61 61 c1 1b 7fffffffffffffff",
		"a1 61 61 c1 3b 7fffffffffffffff", "a1 61 61 c1 fb 41dfffffffc00000", "a1 61 61 c1 fb 3e112e0be826d695")
	// Keys: tagged, of both string types, colliding once printed, null; tags 21-23 on keys and at the top.
	add("a1 d5 41 ff a0", "a1 d6 41 ff a0", "a1 d7 41 ff a0", "a1 c0 74 323031332d30332d32315432303a30343a30305a a0",
		"a1 c1 01 a0", "a1 d9d9f7 61 61 a0", "a2 61 61 01 41 61 02", "a2 41 ff 01 41 fe 02", "a2 41 fe 01 41 ff 02",
		"a2 41 ff 01 62 efbfbd 02", "a2 f6 01 60 02", "a1 f5 a0", "a1 fa 00000000 a0", "a1 80 a0", "a1 a0 a0",
		"d5 a1 61 61 41 ff", "d6 a1 41 ff 41 ff", "d7 a1 61 61 82 41 ff 5f 41 01 41 02 ff", "d5 a1 61 61 d6 41 ff",
		"d5 a1 61 61 d9d9f7 41 ff", "d5 a1 61 61 61 61", "d6 d5 a1 61 61 41 ff", "d8 40 a1 61 61 41 ff",
		"a1 61 61 d5 5f 41 ff 41 fe ff", "a1 61 61 d6 40", "a1 61 61 d7 40", "a1 61 6161 a0",
		"a1 63 5f5f70 a0", "a1 69 5f5f70726f746f5f5f a1 61 61 01")
	// Nesting: 10 000 levels (the limit) and one more, of arrays and of tag chains.
	deep := func(n int, open, close byte) []byte {
		b := append([]byte{0xa1, 0x61, 'a'}, bytes.Repeat([]byte{open}, n-1)...)
		if close != 0 {
			b = append(b, close)
		}
		return b
	}
	inputs = append(inputs, deep(10000, 0x81, 0x80), deep(10001, 0x81, 0x80), deep(10000, 0xc7, 0x01),
		deep(10001, 0xc7, 0x01), deep(9999, 0xc7, 0x80), deep(10000, 0xc7, 0x80))
	// Managed-fields JSON of the shape Kubernetes writes, through FieldsV1.MarshalCBOR.
	for i := 0; i < 300; i++ {
		var f metav1.FieldsV1
		j, err := json.Marshal(fieldSet(0))
		if err != nil {
			fail(err)
		}
		f.SetRawBytes(j)
		c, err := f.MarshalCBOR()
		if err != nil {
			fail(err)
		}
		inputs = append(inputs, c)
	}
	// Random values through Kubernetes' CBOR encoder.
	for i := 0; i < 600; i++ {
		c, err := direct.Marshal(randomObject(0))
		if err != nil {
			continue
		}
		inputs = append(inputs, c)
	}
	// Random CBOR from a grammar: every major type, indefinite lengths, tags, floats and simple values.
	for i := 0; i < 1000; i++ {
		inputs = append(inputs, append([]byte{0xa1, 0x61, 'a'}, randomCBOR(0)...))
	}
	// Damaged copies: a byte flipped, replaced, inserted or removed, or the end cut off.
	n := len(inputs)
	for i := 0; i < 1500; i++ {
		src := inputs[rng.IntN(n)]
		if len(src) == 0 {
			continue
		}
		b := append([]byte{}, src...)
		p := rng.IntN(len(b))
		switch rng.IntN(5) {
		case 0:
			b[p] ^= 1 << rng.IntN(8)
		case 1:
			b[p] = byte(rng.IntN(256))
		case 2:
			b = append(b[:p], append([]byte{byte(rng.IntN(256))}, b[p:]...)...)
		case 3:
			b = append(b[:p], b[p+1:]...)
		default:
			b = b[:p]
		}
		if len(b) > 0 && isCBORStart(b[0]) {
			inputs = append(inputs, b)
		}
	}
	var out []map[string]any
	for _, in := range inputs {
		if len(in) == 0 || !isCBORStart(in[0]) {
			continue // not CBOR to FieldsV1: its bytes are handed on as they are
		}
		var f metav1.FieldsV1
		f.SetRawBytes(in)
		v := map[string]any{"hex": hex.EncodeToString(in)}
		if j, err := json.Marshal(f); err != nil {
			v["error"] = err.Error()
		} else {
			v["json"] = json.RawMessage(j)
		}
		out = append(out, v)
	}
	return out
}

// isCBORStart: the first bytes FieldsV1 takes for CBOR (null, a map, a tag).
func isCBORStart(b byte) bool {
	return b == 0xf6 || b >= 0xa0 && b <= 0xbf || b >= 0xc6 && b <= 0xdb
}

// fieldSet is a managed-fields set as JSON: "f:name", "k:{...}", "v:..." and "i:n" keys, "." for the set itself.
func fieldSet(depth int) map[string]any {
	m := map[string]any{}
	if depth > 0 && rng.IntN(2) == 0 {
		m["."] = map[string]any{}
	}
	for i := rng.IntN(4); i >= 0; i-- {
		var key string
		switch rng.IntN(5) {
		case 0:
			key = fmt.Sprintf(`k:{"name":%q}`, randomText())
		case 1:
			key = fmt.Sprintf(`v:%q`, randomText())
		case 2:
			key = fmt.Sprintf("i:%d", rng.IntN(10))
		default:
			key = "f:" + randomText()
		}
		if depth < 4 && rng.IntN(2) == 0 {
			m[key] = fieldSet(depth + 1)
		} else {
			m[key] = map[string]any{}
		}
	}
	return m
}

func randomText() string {
	words := []string{"metadata", "labels", "app.kubernetes.io/name", "spec", "containers", "é", "名前", "ports", "", "x y", "\"q\"", "\\"}
	return words[rng.IntN(len(words))] + words[rng.IntN(len(words))]
}

// randomObject is a random map of the values Kubernetes' decoder yields (and byte slices).
func randomObject(depth int) map[string]any {
	m := map[string]any{}
	for i := rng.IntN(5); i > 0; i-- {
		m[randomText()+fmt.Sprint(rng.IntN(100))] = randomValue(depth + 1)
	}
	return m
}

func randomValue(depth int) any {
	switch k := rng.IntN(12); {
	case k == 0 && depth < 5:
		return randomObject(depth)
	case k == 1 && depth < 5:
		var a []any
		for i := rng.IntN(4); i > 0; i-- {
			a = append(a, randomValue(depth+1))
		}
		return a
	case k == 2:
		return randomText()
	case k == 3:
		return int64(rng.Uint64())
	case k == 4:
		return rng.Int64N(1000) - 500
	case k == 5:
		floats := []float64{0.5, -0, 1e21, 1e-7, 123456789.125, math.MaxFloat64, math.SmallestNonzeroFloat64, 1.0 / 3, 100, -2.5e-300}
		return floats[rng.IntN(len(floats))]
	case k == 6:
		return math.Float64frombits(rng.Uint64()&^(0x7ff<<52) | uint64(rng.IntN(0x7ff))<<52)
	case k == 7:
		return rng.IntN(2) == 0
	case k == 8:
		return nil
	case k == 9:
		b := make([]byte, rng.IntN(6))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return b
	default:
		return randomText()
	}
}

// randomCBOR is one random data item, well-formed or not in a few ways Kubernetes' decoder must judge.
func randomCBOR(depth int) []byte {
	head := func(major byte, n uint64) []byte {
		switch {
		case n < 24 && rng.IntN(8) != 0:
			return []byte{major<<5 | byte(n)}
		case n < 256 && rng.IntN(4) != 0:
			return []byte{major<<5 | 24, byte(n)}
		case n < 65536 && rng.IntN(3) != 0:
			return binary.BigEndian.AppendUint16([]byte{major<<5 | 25}, uint16(n))
		case n < 1<<32 && rng.IntN(2) != 0:
			return binary.BigEndian.AppendUint32([]byte{major<<5 | 26}, uint32(n))
		default:
			return binary.BigEndian.AppendUint64([]byte{major<<5 | 27}, n)
		}
	}
	num := func() uint64 {
		switch rng.IntN(4) {
		case 0:
			return uint64(rng.IntN(30))
		case 1:
			return uint64(rng.IntN(70000))
		case 2:
			return rng.Uint64() >> rng.IntN(64)
		default:
			return math.MaxInt64 + uint64(rng.IntN(3)) - 1
		}
	}
	text := func() []byte {
		s := []byte(randomText())
		if rng.IntN(10) == 0 {
			s = append(s, 0xff)
		}
		return s
	}
	k := rng.IntN(16)
	if depth >= 4 {
		k = rng.IntN(6)
	}
	switch k {
	case 0:
		return head(0, num())
	case 1:
		return head(1, num())
	case 2:
		b := make([]byte, rng.IntN(5))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return append(head(2, uint64(len(b))), b...)
	case 3:
		s := text()
		return append(head(3, uint64(len(s))), s...)
	case 4:
		simple := []byte{0xf4, 0xf5, 0xf6, 0xf7, 0xf0, 0xf8}
		b := []byte{simple[rng.IntN(len(simple))]}
		if b[0] == 0xf8 {
			b = append(b, byte(rng.IntN(256)))
		}
		return b
	case 5:
		switch rng.IntN(3) {
		case 0:
			return binary.BigEndian.AppendUint16([]byte{0xf9}, uint16(rng.Uint32()))
		case 1:
			return binary.BigEndian.AppendUint32([]byte{0xfa}, rng.Uint32())
		default:
			return binary.BigEndian.AppendUint64([]byte{0xfb}, rng.Uint64())
		}
	case 6, 7:
		n := rng.IntN(4)
		var b []byte
		if rng.IntN(4) == 0 {
			b = []byte{0x9f}
		} else {
			b = head(4, uint64(n))
		}
		for i := 0; i < n; i++ {
			b = append(b, randomCBOR(depth+1)...)
		}
		if b[0] == 0x9f {
			b = append(b, 0xff)
		}
		return b
	case 8, 9, 10:
		n := rng.IntN(4)
		var b []byte
		indefinite := rng.IntN(4) == 0
		if indefinite {
			b = []byte{0xbf}
		} else {
			b = head(5, uint64(n))
		}
		for i := 0; i < n; i++ {
			if rng.IntN(12) == 0 {
				b = append(b, randomCBOR(depth+1)...) // a key that is not a text string
			} else {
				s := []byte(randomText())
				if rng.IntN(3) == 0 {
					s = []byte("k")
				}
				b = append(append(b, head(3, uint64(len(s)))...), s...)
			}
			b = append(b, randomCBOR(depth+1)...)
		}
		if indefinite {
			b = append(b, 0xff)
		}
		return b
	case 11:
		// Indefinite-length strings: chunks of the same major type (now and then another).
		major := byte(2 + rng.IntN(2))
		b := []byte{major<<5 | 31}
		for i := rng.IntN(3); i > 0; i-- {
			m := major
			if rng.IntN(10) == 0 {
				m = 5 - major
			}
			s := text()
			b = append(append(b, head(m, uint64(len(s)))...), s...)
		}
		return append(b, 0xff)
	default:
		tags := []uint64{0, 1, 2, 3, 4, 5, 21, 22, 23, 24, 32, 55799, 256, uint64(rng.IntN(1 << 20))}
		t := tags[rng.IntN(len(tags))]
		var content []byte
		switch rng.IntN(4) {
		case 0:
			content = []byte("\x742013-03-21T20:04:00Z")
		case 1:
			content = head(0, uint64(1363896240+rng.IntN(1000)))
		default:
			content = randomCBOR(depth + 1)
		}
		return append(head(6, t), content...)
	}
}

// ---------------------------------------------------------------------------------------------------------------
// Objects stored as CBOR

// cborObjectVectors: the hand-written realistic object of each kind that has one, encoded by Kubernetes' CBOR
// serializer (as the API server stores objects with the CBOR storage media type: the self-described CBOR tag, then
// the object), and damaged copies; for each, the JSON of the map[string]interface{} Kubernetes' CBOR decoder makes of
// it (direct.Unmarshal: what the serializer's Decode does for an Unstructured, without its apiVersion/kind checks),
// or the error.
func cborObjectVectors() []map[string]any {
	s := kcbor.NewSerializer(kinds.Scheme, kinds.Scheme)
	var inputs [][]byte
	for _, k := range kinds.All() {
		if realistic.Source(k) != "handwritten" {
			continue
		}
		obj := realistic.Object(k)
		obj.GetObjectKind().SetGroupVersionKind(k.GVK)
		var buf bytes.Buffer
		if err := s.Encode(obj, &buf); err != nil {
			fail(fmt.Errorf("%s: %w", k.GVK, err))
		}
		inputs = append(inputs, buf.Bytes())
	}
	n := len(inputs)
	for i := 0; i < 2*n; i++ {
		b := append([]byte{}, inputs[i%n]...)
		p := 3 + rng.IntN(len(b)-3)
		switch rng.IntN(3) {
		case 0:
			b[p] ^= 1 << rng.IntN(8)
		case 1:
			b[p] = byte(rng.IntN(256))
		default:
			b = b[:p]
		}
		inputs = append(inputs, b)
	}
	var out []map[string]any
	for _, in := range inputs {
		v := map[string]any{"hex": hex.EncodeToString(in)}
		var m map[string]any
		if err := direct.Unmarshal(in, &m); err != nil {
			v["error"] = err.Error()
		} else if j, err := json.Marshal(m); err != nil {
			v["error"] = err.Error()
		} else {
			v["json"] = json.RawMessage(j)
		}
		out = append(out, v)
	}
	return out
}
