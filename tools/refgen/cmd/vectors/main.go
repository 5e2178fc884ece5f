// Command vectors writes the test vectors of watchwire's Kubernetes JSON runtime
// (src/codec/kubernetes/runtime/): for strings, metav1.Time, metav1.MicroTime, metav1.Duration and
// resource.Quantity, the protobuf bytes of a value and the JSON that Go's encoding/json prints for the Go value
// that the type's generated Unmarshal yields from those bytes. Every output comes from the real Go code paths
// (gogo-generated Marshal/Unmarshal of k8s.io/apimachinery, the types' MarshalJSON, encoding/json); nothing is
// computed here except the inputs.
//
// Usage (from tools/refgen): go run ./cmd/vectors -out ../../fixtures/kubernetes/vectors
package main

import (
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/watchwire/watchwire/tools/refgen/internal/vectorfile"
)

// Seeds of the deterministic random inputs (PCG).
const seed1, seed2 = 0x77617463687769, 0x7265

var rng = rand.New(rand.NewPCG(seed1, seed2))

func main() {
	out := flag.String("out", "../../fixtures/kubernetes/vectors", "output directory")
	flag.Parse()
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fail(err)
	}
	write(*out, "strings.json", "Go string (from protobuf bytes) to encoding/json output: metav1.ObjectMeta{Name} Marshal, Unmarshal, json.Marshal(Name)", stringVectors())
	write(*out, "bytes.json", "[]byte to encoding/json output (standard padded base64): json.Marshal([]byte)", bytesVectors())
	write(*out, "times.json", "metav1.Timestamp bytes to json.Marshal(metav1.Time) after metav1.Time.Unmarshal", timeVectors())
	write(*out, "microtimes.json", "metav1.Timestamp bytes to json.Marshal(metav1.MicroTime) after metav1.MicroTime.Unmarshal", microTimeVectors())
	write(*out, "durations.json", "metav1.Duration bytes to json.Marshal(metav1.Duration) after metav1.Duration.Unmarshal", durationVectors())
	write(*out, "quantities.json", "resource.Quantity message bytes (field 1 = s) to json.Marshal(resource.Quantity) after Quantity.Unmarshal; json null = Unmarshal failed (error)", quantityVectors())
	write(*out, "fieldsv1_cbor.json", "FieldsV1 bytes that start as CBOR (null, a map, a tag) to json.Marshal(metav1.FieldsV1) (its MarshalJSON: Kubernetes' CBOR decoder, then encoding/json); json null = it failed (error)", fieldsV1Vectors())
	write(*out, "cbor_objects.json", "hand-written realistic objects through Kubernetes' CBOR serializer (runtime/serializer/cbor: Encode, as the API server stores objects as CBOR), and damaged copies, to json.Marshal of the map[string]interface{} direct.Unmarshal makes of them; json null = it failed (error)", cborObjectVectors())
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "vectors:", err)
	os.Exit(1)
}

// write writes one vector file (see package vectorfile).
func write(dir, name, description string, vectors []map[string]any) {
	all := make([]any, len(vectors))
	for i, v := range vectors {
		all[i] = v
	}
	header := map[string]any{"description": description, "generator": "tools/refgen/cmd/vectors", "seed": []uint64{seed1, seed2}}
	size, err := vectorfile.Write(filepath.Join(dir, name), header, []string{"k8s.io/", "gopkg.in/inf.v0", "github.com/fxamacker/cbor/v2"}, all)
	if err != nil {
		fail(err)
	}
	fmt.Printf("%s: %d vectors, %d bytes\n", name, len(vectors), size)
}

// hexInputs decodes hex strings (spaces ignored) to bytes.
func hexInputs(hexes ...string) [][]byte {
	var out [][]byte
	for _, h := range hexes {
		b, err := hex.DecodeString(strings.ReplaceAll(h, " ", ""))
		if err != nil {
			fail(err)
		}
		out = append(out, b)
	}
	return out
}

// ---------------------------------------------------------------------------------------------------------------
// Strings

func stringVectors() []map[string]any {
	var inputs [][]byte
	add := func(hexes ...string) { inputs = append(inputs, hexInputs(hexes...)...) }
	// Hand-picked: empty, ASCII, controls, the characters encoding/json escapes, BOM, every boundary of UTF-8.
	add("", "61", "00", "7f", "0a0d09", "3c3e26", "22 5c 2f", "e2 80 a8", "e2 80 a9", "ef bb bf 61", "ef bb bf",
		"c2 80", "df bf", "e0 a0 80", "ef bf bf", "f0 90 80 80", "f4 8f bf bf", "ed 9f bf", "ee 80 80",
		"ef bf bd", "ef bf be", "c3 a9", "f0 9f 9a 80",
		// invalid: Go replaces each byte of an ill-formed sequence by its own U+FFFD
		"80", "bf", "c0", "c1", "f5", "f8", "fe", "ff", "c0 80", "c1 bf", "e0 80 80", "e0 9f bf", "f0 80 80 80",
		"f0 8f bf bf", "f4 90 80 80", "f7 bf bf bf", "ed a0 80", "ed bf bf", "ed a0 80 ed b0 80", "e2 82 41", "e2 82",
		"e2", "f0 9f 98", "f0 9f", "f0", "c3", "c3 41", "61 c3", "e2 82 e2 82 ac", "f0 9f 98 f0 9f 98 80",
		"80 80 80", "c2 c2 80", "e1 80 c0", "f1 80 80 c0", "fc 80 80 80 80 80", "61 ff 62 fe 63",
		"f8 88 80 80 80", "c0 af", "e0 80 af", "f0 80 80 af")
	// every single byte
	for b := 0; b < 256; b++ {
		inputs = append(inputs, []byte{byte(b)})
	}
	// every lead byte followed by every continuation-ish byte, to pin the second-byte ranges
	for lead := 0xc0; lead <= 0xff; lead++ {
		for _, second := range []byte{0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0} {
			inputs = append(inputs, []byte{byte(lead), second, 0x80, 0x80, 'x'})
		}
	}
	// long inputs (ConfigMap data): ASCII, multi-byte, and with invalid bytes at the start, middle and end
	long := func(n int, gen func() []byte) []byte {
		var b []byte
		for len(b) < n {
			b = append(b, gen()...)
		}
		return b[:n]
	}
	asciiChunk := func() []byte { return []byte("key: value-0123456789 abcdefghijklmnopqrstuvwxyz\n") }
	mixedChunk := func() []byte { return []byte("naïve ☸ 日本 — café 🚀 ") }
	for _, n := range []int{100, 1000, 4096, 16384, 30000} {
		inputs = append(inputs, long(n, asciiChunk))
	}
	for _, n := range []int{4096, 30000} {
		m := long(n, mixedChunk)
		for !utf8.Valid(m) {
			m = m[:len(m)-1]
		}
		inputs = append(inputs, m)
	}
	for _, at := range []int{0, 15000, 29999} {
		b := long(30000, asciiChunk)
		b[at] = 0xff
		inputs = append(inputs, b)
	}
	{
		b := long(20000, mixedChunk)
		b = append(b, 0xe2, 0x82) // truncated at the end
		inputs = append(inputs, b)
	}
	// random: raw bytes, valid runes with invalid insertions, mostly-ASCII
	for i := 0; i < 4000; i++ {
		inputs = append(inputs, randomString())
	}
	for i := 0; i < 6; i++ {
		n := 4096 + rng.IntN(26000)
		var b []byte
		for len(b) < n {
			b = append(b, randomString()...)
		}
		inputs = append(inputs, b)
	}

	var vectors []map[string]any
	for _, in := range inputs {
		meta := metav1.ObjectMeta{Name: string(in)}
		pb, err := meta.Marshal()
		if err != nil {
			fail(err)
		}
		var back metav1.ObjectMeta
		if err := back.Unmarshal(pb); err != nil {
			fail(err)
		}
		if back.Name != string(in) {
			fail(fmt.Errorf("ObjectMeta name round trip changed %x", in))
		}
		j, err := json.Marshal(back.Name)
		if err != nil {
			fail(err)
		}
		vectors = append(vectors, map[string]any{"hex": hex.EncodeToString(in), "json": string(j)})
	}
	return vectors
}

func randomString() []byte {
	n := rng.IntN(48)
	var b []byte
	mode := rng.IntN(4)
	for len(b) < n {
		switch {
		case mode == 0: // raw bytes
			b = append(b, byte(rng.IntN(256)))
		case mode == 1 && rng.IntN(10) == 0, mode == 2 && rng.IntN(3) == 0: // ill-formed pieces
			b = append(b, illFormed()...)
		case mode == 3 && rng.IntN(8) != 0: // mostly ASCII
			b = append(b, byte(0x20+rng.IntN(0x5f)))
		default: // a valid rune of a random length class
			var r rune
			switch rng.IntN(5) {
			case 0:
				r = rune(rng.IntN(0x80))
			case 1:
				r = rune(0x80 + rng.IntN(0x800-0x80))
			case 2:
				r = rune(0x800 + rng.IntN(0x10000-0x800))
				if r >= 0xd800 && r <= 0xdfff {
					r = 0xfffd
				}
			default:
				r = rune(0x10000 + rng.IntN(0x110000-0x10000))
			}
			b = utf8.AppendRune(b, r)
		}
	}
	return b
}

// illFormed returns a random ill-formed UTF-8 piece: lone continuation bytes, truncated sequences, overlongs,
// surrogates, code points above U+10FFFF, bytes that never occur.
func illFormed() []byte {
	cont := func() byte { return byte(0x80 + rng.IntN(0x40)) }
	switch rng.IntN(8) {
	case 0:
		return []byte{cont()}
	case 1: // truncated 2/3/4-byte sequence
		full := utf8.AppendRune(nil, rune(0x80+rng.IntN(0x10ffff-0x80)))
		if len(full) < 2 {
			return []byte{0xc3}
		}
		return full[:1+rng.IntN(len(full)-1)]
	case 2: // overlong
		switch rng.IntN(3) {
		case 0:
			return []byte{byte(0xc0 + rng.IntN(2)), cont()}
		case 1:
			return []byte{0xe0, byte(0x80 + rng.IntN(0x20)), cont()}
		default:
			return []byte{0xf0, byte(0x80 + rng.IntN(0x10)), cont(), cont()}
		}
	case 3: // surrogate
		return []byte{0xed, byte(0xa0 + rng.IntN(0x20)), cont()}
	case 4: // above U+10FFFF
		if rng.IntN(2) == 0 {
			return []byte{0xf4, byte(0x90 + rng.IntN(0x30)), cont(), cont()}
		}
		return []byte{byte(0xf5 + rng.IntN(3)), cont(), cont(), cont()}
	case 5: // bytes that never occur
		return []byte{byte(0xf8 + rng.IntN(8))}
	case 6: // a lead byte followed by a non-continuation
		return []byte{byte(0xc2 + rng.IntN(0x33)), byte(rng.IntN(0x80))}
	default:
		return []byte{byte(0x80 + rng.IntN(0x80))}
	}
}

// ---------------------------------------------------------------------------------------------------------------
// []byte

func bytesVectors() []map[string]any {
	var inputs [][]byte
	for n := 0; n <= 64; n++ {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		inputs = append(inputs, b)
	}
	inputs = append(inputs, []byte{0xff, 0xff, 0xff}, []byte{0xfb, 0xff}, []byte{0xf8}, []byte{0, 0, 0}, []byte("Man"))
	for i := 0; i < 500; i++ {
		b := make([]byte, rng.IntN(200))
		for j := range b {
			b[j] = byte(rng.IntN(256))
		}
		inputs = append(inputs, b)
	}
	for _, n := range []int{4095, 4096, 4097, 30000, 30001, 30002} {
		b := make([]byte, n)
		for j := range b {
			b[j] = byte(rng.IntN(256))
		}
		inputs = append(inputs, b)
	}
	var vectors []map[string]any
	for _, in := range inputs {
		j, err := json.Marshal(in)
		if err != nil {
			fail(err)
		}
		vectors = append(vectors, map[string]any{"hex": hex.EncodeToString(in), "json": string(j)})
	}
	return vectors
}

// ---------------------------------------------------------------------------------------------------------------
// metav1.Time and metav1.MicroTime

const zeroTimeUnix = -62135596800 // January 1, year 1, 00:00:00 UTC

func interestingSeconds() []int64 {
	s := []int64{
		0, 1, -1, 59, 60, 86399, 86400, -86400, -86401, 1700000000, 1234567890, 2147483647, -2147483648, 4294967296,
		951782400, 951868800, 983404800, // 2000-02-29, 2000-03-01, 2001-03-01
		-2203891200, -2203977600, // 1900-03-01, 1900-02-28
		zeroTimeUnix, zeroTimeUnix - 1, zeroTimeUnix + 1, zeroTimeUnix - 86400, zeroTimeUnix + 86400,
		-62167219200, -62167219201, -62198755200, -62198755201, // years 0 and -1 boundaries
		-30610224000,               // 1000-01-01
		-30610224001,               // 0999-12-31T23:59:59
		253402300799, 253402300800, // 9999-12-31T23:59:59, 10000-01-01
		253402300800 * 10, -253402300800 * 10,
		1 << 53, -(1 << 53), 1<<53 + 1, -(1<<53 + 1), 1<<53 - 1, -(1<<53 - 1),
		1 << 62, -(1 << 62), math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1,
		math.MaxInt64 - 62135596800, math.MinInt64 + 62135596800,
		-9223372036854775808 + 62135596800 - 1,
		67767976233532799, 67767976233532800, -67768040609740800, -67768040609740801, // years ±2^31 region
		8000000000000000000, -8000000000000000000, 9000000000000000000, -9000000000000000000,
	}
	// the wrap-around region of Go's absolute-time arithmetic (time.unixToInternal + time.internalToAbsolute)
	const unixToAbsolute = 9223372028741760000
	for _, d := range []int64{-86401, -86400, -2, -1, 0, 1, 2, 86399, 86400} {
		s = append(s, -unixToAbsolute+d)
	}
	// where sec + unixToAbsolute overflows int64 (Go converts the wrapped sum to uint64)
	for _, d := range []int64{-1, 0, 1} {
		s = append(s, math.MaxInt64-unixToAbsolute+d)
	}
	return s
}

func randomSeconds() int64 {
	switch rng.IntN(6) {
	case 0: // recent
		return 946684800 + rng.Int64N(4102444800-946684800)
	case 1: // years 1..9999 and a little beyond
		return zeroTimeUnix - 1e10 + rng.Int64N(253402300800-zeroTimeUnix+2e10)
	case 2: // anything
		return int64(rng.Uint64())
	case 3: // log-uniform magnitude, either sign, or the bottom of the int64 range where Go's arithmetic wraps
		if rng.IntN(4) == 0 {
			return math.MinInt64 + rng.Int64N(20000000000)
		}
		m := int64(1) << rng.IntN(63)
		v := rng.Int64N(m)
		if rng.IntN(2) == 0 {
			v = -v
		}
		return v
	case 4: // near the zero time
		return zeroTimeUnix + rng.Int64N(200001) - 100000
	default: // safe-integer range
		return rng.Int64N(1<<54) - 1<<53
	}
}

func interestingNanos() []int32 {
	return []int32{0, 1, 999, 1000, 1001, 999999, 1000000, 999999999, 1000000000, 1000000999, 1999999999,
		math.MaxInt32, -1, -999, -1000, -1001, -999999999, -1000000000, -1000001000, math.MinInt32, 500, 123456789}
}

func randomNanos() int32 {
	switch rng.IntN(4) {
	case 0, 1:
		return int32(rng.IntN(1000000000))
	case 2:
		return int32(rng.Uint32())
	default:
		return int32(rng.IntN(2000)) - 1000
	}
}

func timestampBytes(sec int64, nanos int32) []byte {
	ts := metav1.Timestamp{Seconds: sec, Nanos: nanos}
	pb, err := ts.Marshal()
	if err != nil {
		fail(err)
	}
	return pb
}

func timeVectors() []map[string]any {
	type in struct {
		sec   int64
		nanos int32
	}
	var inputs []in
	for _, s := range interestingSeconds() {
		inputs = append(inputs, in{s, 0}, in{s, 999999999})
	}
	for i := 0; i < 4000; i++ {
		inputs = append(inputs, in{randomSeconds(), randomNanos()})
	}
	// the empty message (what an absent or zero metav1.Time marshals to)
	vectors := []map[string]any{timeVector(nil, "", 0)}
	for _, x := range inputs {
		vectors = append(vectors, timeVector(timestampBytes(x.sec, x.nanos), strconv.FormatInt(x.sec, 10), x.nanos))
	}
	return vectors
}

func timeVector(pb []byte, sec string, nanos int32) map[string]any {
	var t metav1.Time
	if err := t.Unmarshal(pb); err != nil {
		fail(err)
	}
	j, err := json.Marshal(t)
	if err != nil {
		fail(err)
	}
	v := map[string]any{"pb": hex.EncodeToString(pb), "json": string(j)}
	if pb != nil {
		v["seconds"] = sec
		v["nanos"] = nanos
	}
	return v
}

func microTimeVectors() []map[string]any {
	type in struct {
		sec   int64
		nanos int32
	}
	var inputs []in
	for _, s := range interestingSeconds() {
		for _, n := range interestingNanos() {
			inputs = append(inputs, in{s, n})
		}
	}
	for i := 0; i < 4000; i++ {
		inputs = append(inputs, in{randomSeconds(), randomNanos()})
	}
	vectors := []map[string]any{microTimeVector(nil, "", 0)}
	for _, x := range inputs {
		vectors = append(vectors, microTimeVector(timestampBytes(x.sec, x.nanos), strconv.FormatInt(x.sec, 10), x.nanos))
	}
	return vectors
}

func microTimeVector(pb []byte, sec string, nanos int32) map[string]any {
	var t metav1.MicroTime
	if err := t.Unmarshal(pb); err != nil {
		fail(err)
	}
	j, err := json.Marshal(t)
	if err != nil {
		fail(err)
	}
	v := map[string]any{"pb": hex.EncodeToString(pb), "json": string(j)}
	if pb != nil {
		v["seconds"] = sec
		v["nanos"] = nanos
	}
	return v
}

// ---------------------------------------------------------------------------------------------------------------
// metav1.Duration

func durationVectors() []map[string]any {
	ds := []int64{0, 1, -1, 9, 10, 999, 1000, 1001, 1100, 999999, 1000000, 1000001, 1500000, 999999999, 1000000000,
		1000000001, 1500000000, 59999999999, 60000000000, 61000000000, 3599999999999, 3600000000000, 3600000000001,
		86400000000000, -1000, -1000000, -1000000000, -3600000000000, 1 << 53, -(1 << 53), 1<<53 + 1, -(1<<53 + 1),
		math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1, int64(time.Hour) * 2540400,
		int64(300 * time.Millisecond), int64(2*time.Hour + 45*time.Minute), int64(1500 * time.Microsecond)}
	for i := 0; i < 4000; i++ {
		var d int64
		switch rng.IntN(4) {
		case 0:
			d = int64(rng.Uint64())
		case 1, 2:
			m := int64(1) << rng.IntN(63)
			d = rng.Int64N(m)
			if rng.IntN(2) == 0 {
				d = -d
			}
		default: // round units
			units := []int64{1, 1000, 1e6, 1e9, 60e9, 3600e9}
			d = rng.Int64N(100000) * units[rng.IntN(len(units))]
			if rng.IntN(4) == 0 {
				d = -d
			}
		}
		ds = append(ds, d)
	}
	var vectors []map[string]any
	for _, d := range ds {
		m := metav1.Duration{Duration: time.Duration(d)}
		pb, err := m.Marshal()
		if err != nil {
			fail(err)
		}
		var back metav1.Duration
		if err := back.Unmarshal(pb); err != nil {
			fail(err)
		}
		j, err := json.Marshal(back)
		if err != nil {
			fail(err)
		}
		vectors = append(vectors, map[string]any{"nanos": strconv.FormatInt(d, 10), "pb": hex.EncodeToString(pb), "json": string(j)})
	}
	return vectors
}

// ---------------------------------------------------------------------------------------------------------------
// resource.Quantity

func quantityEdgeCases() []string {
	s := []string{
		"", "0", "00", "+0", "-0", "0.0", ".", "+", "-", "+.", "-.", ".0", "0.", "5.", ".5", "+.5", "-.5", "-5.",
		"1", "+1", "-1", "01", "-01", "001", "1.0", "1.00", "1.000", "1.500k", "1.5k", "1500", "1000", "1000m",
		"100m", "0.1", "0.5", "0.001", "0.0001", "1n", "0.1n", "1u", "1.5u", "1m", "1k", "1M", "1G", "1T", "1P", "1E",
		"1000E", "999E", "1000000E", "1.5E", "0.5E", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
		"-9223372036854775809", "999999999999999999", "9999999999999999999", "123456789012345678", "1234567890123456789",
		"99999999999999999999999999E", "1Ki", "1.5Ki", "1.5Gi", "1536Mi", "1024Ki", "1023Ki", "1025Ki", "8Ki", "12Ki",
		"128Mi", "0.5Gi", "0.1Ki", "0.0001Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei", "7Ei", "8Ei", "9Ei", "100Ei", "-8Ei",
		"-100Ei", "0Ki", "-0Ki", "+5Ki", "05Ki", "1023", "1024", "-1024", "1025", "2048", "1Ki1", "Ki", "1.Ki", ".Ki",
		"12345678901234Ki", "123456789012345Ki", "1e3", "1E3", "1e+3", "1e-3", "1e0", "1e00", "1e-0", "1e", "1E", "1e+",
		"1e-", "1ee3", "1e3.5", "1e-12", "1.5e-9", "1.5e-10", "12e6", "1e18", "1e19", "1e-9", "1e-10", "1e100",
		"1e-100", "1.23456789e2", "1e2147483647", "1e2147483648", "1e-2147483648", "1e-2147483649", "1e4294967296",
		"1e4294967297", "10e2147483647", "1.55e-2147483647", "1.5e-2147483647", "1e9223372036854775807",
		"1e9223372036854775808", "1e-9223372036854775808", "5e-2147483648", "1K", "1Kb", "1KiB", "1mi", "1i", "1 ",
		" 1", "1 Ki", "1x", "x", "1.2.3", "1+5", "1-", "--1", "+-1", "1e3e3", "1ke3", "1Mi3", "1m3", "1nn", "0x10",
		"1_000", "١", "1\x00", "\xff", "1\xc3\xa9", "∞", "NaN", "Inf", "1e-5m", "0.000000001", "0.0000000001",
		"-0.0000000001", "0.0000000015", "1.000000001", "1.0000000001", "-1.0000000001", "123.456789", "1e3m",
		"3.14159265358979323846264338327950288419716939937510", "0.00000000000000000000000000001Ki", "1.0000000001Ki",
		"1.0Ki", "10.5Mi", "1.1Ei", "1.1i", "100000000000000000000000", "-100000000000000000000000",
		"-99999999999999999999999999E", "0.000000000000000000000000001e30", "1000000000000000000000e-21", "1e-18k",
		"18446744073709551616", "1e21", "1e24", "123e21", "0e21", "0e-21", "0.0e-100", "-0.0e-100", "-.e-20",
		"-0.e-20", ".e5", "1.e5", "2Pi", "3Ti", "99Ti", "100Ti", "16Ei", "8191Pi", "8192Pi", "0.5Ki", "1.5", "-1.5",
		"1.5m", "1.05m", "0.0005", "1.0005", "1.25e-7", "10000000000000000000m", "999999999999999999m",
		"9223372036854775807m", "9223372036854775807k", "9223372036854775807Ki", "9007199254740993",
		"9007199254740993m", "9007199254740993Ki", "1e-1", "1e-2", "1e1", "1e2", "1e4", "1e5", "10e1", "100e-1",
		"0.1e1", "1.1e1", "1.10e1", "11e-1", "1e-4", "1e-7", "1e-8", "12e-10", "1.5e3", "1500e0", "100e-3", "100E-3",
		// int64 canonicalisation overflowing into the inf.Dec form, and int32 exponent wrap-around
		"999999999999999999e1", "999999999999999999e2", "-999999999999999999e1", "-999999999999999999e2",
		"922337203685477580e1", "922337203685477581e1", "-922337203685477580e1", "-922337203685477581e1",
		"92233720368547758e2", "92233720368547759e2", "999999999999999999e-2147483648", "1e-2147483646",
		"1e2147483646", "1.5e2147483647", "15e2147483647", "150e2147483647", "1.5e-2147483648", "12.5e-2147483647",
		"1.23e-2147483647", "0.000000001e-2147483640", "1e-2147483639", "1e-2147483640", "100e2147483647",
		"1000e2147483647", "-1000e2147483647", "1e2147483647", "-1e2147483647", "1000e-2147483648",
		"12345678901234567890e-30", "12345678901234567890e30", "0.0000000000000000000000001", "-0.0000000000000000000000001",
		"1234567890123456789012345678901234567890", "1234567890123456789012345678901234567890m",
		"1234567890123456789012345678901234567890Ki", "0.1234567890123456789012345678901234567890Ki",
		"9223372036854775807Ki", "9223372036854775807.5", "-9223372036854775807.5Ki", "1.5n", "0.5n", "-0.5n",
		"1.0000000005", "999999999.9999999999", "0.9999999999Ki", "1023.9999999999", "1023.9999999999Ki",
		"1024.0000000001Ki", "1.0009765625Ki", "0.0009765625Ki", "1048576.5Ki",
	}
	for _, suf := range []string{"", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "e3", "e-3"} {
		for _, num := range []string{"1", "-1", "1.5", "1000", "1024", "0.001", "999999999999999999", "1234567890123456789012"} {
			s = append(s, num+suf)
		}
	}
	return s
}

// randomQuantity draws from a grammar that mostly yields valid quantities and sometimes not.
func randomQuantity() string {
	var b strings.Builder
	pick := func(options ...string) string { return options[rng.IntN(len(options))] }
	digits := func(n int) string {
		var d strings.Builder
		for i := 0; i < n; i++ {
			d.WriteByte(byte('0' + rng.IntN(10)))
		}
		return d.String()
	}
	smallLen := func() int {
		switch rng.IntN(6) {
		case 0:
			return 0
		case 1, 2, 3:
			return 1 + rng.IntN(4)
		case 4:
			return 1 + rng.IntN(18)
		default:
			return 1 + rng.IntN(30)
		}
	}
	if rng.IntN(50) == 0 { // junk
		n := rng.IntN(8)
		for i := 0; i < n; i++ {
			b.WriteByte("0123456789.+-eEinumkKMGTPx iB"[rng.IntN(29)])
		}
		return b.String()
	}
	b.WriteString(pick("", "", "", "", "+", "-", "-"))
	if rng.IntN(5) == 0 {
		b.WriteString(strings.Repeat("0", 1+rng.IntN(3)))
	}
	intLen := smallLen()
	b.WriteString(digits(intLen))
	if rng.IntN(3) == 0 {
		b.WriteByte('.')
		fracLen := smallLen()
		b.WriteString(digits(fracLen))
		if fracLen > 0 && rng.IntN(3) == 0 {
			b.WriteString(strings.Repeat("0", 1+rng.IntN(4)))
		}
	} else if rng.IntN(4) == 0 {
		b.WriteString(strings.Repeat("0", 1+rng.IntN(6))) // trailing zeros
	}
	switch rng.IntN(10) {
	case 0, 1:
	case 2, 3, 4:
		b.WriteString(pick("n", "u", "m", "k", "M", "G", "T", "P", "E"))
	case 5, 6:
		b.WriteString(pick("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"))
	case 7, 8:
		b.WriteString(pick("e", "E"))
		b.WriteString(pick("", "", "+", "-", "-"))
		switch rng.IntN(8) {
		case 0:
			b.WriteString(strconv.Itoa(rng.IntN(1 << 31)))
		case 1:
			b.WriteString(strconv.FormatUint(rng.Uint64()>>rng.IntN(64), 10))
		case 2:
			b.WriteString(strconv.Itoa(rng.IntN(400)))
		default:
			b.WriteString(strconv.Itoa(rng.IntN(40)))
		}
	default: // a suffix that may be malformed
		b.WriteString(pick("K", "Kb", "mi", "i", "ee3", "e", "e+", "e-", "e3.5", "Ki3", "KiB", " ", "x", "mm", "kk", "1e", "Mi-1", "+3", "-3", "E+1"))
	}
	return b.String()
}

// parse runs Quantity.Unmarshal with a time limit: some inputs (a long mantissa with a huge exponent) make the
// inf.Dec path materialise enormous numbers; the generator must not draw those.
func parseQuantity(pb []byte) (string, error) {
	type result struct {
		json string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		var q resource.Quantity
		if err := q.Unmarshal(pb); err != nil {
			done <- result{"", err}
			return
		}
		j, err := json.Marshal(q)
		if err != nil {
			fail(err)
		}
		done <- result{string(j), nil}
	}()
	select {
	case r := <-done:
		return r.json, r.err
	case <-time.After(20 * time.Second):
		fail(fmt.Errorf("Quantity.Unmarshal(%x) took more than 20 s", pb))
		return "", nil
	}
}

// tooSlowForGo reports inputs for which Go's inf.Dec path materialises enormous powers of ten: a decimal exponent
// of huge magnitude that does not take the int64 fast path (which needs at most 18 digits and a scale >= -9, with
// Go's int32 wrap-around). Rounding to nanos multiplies or divides by 10^|shift|, and removing the factors of ten
// afterwards loops once per factor, so Go takes minutes to hours; the generator cannot produce vectors for those.
func tooSlowForGo(s string) bool {
	i := strings.IndexAny(s, "eE")
	if i < 0 || i == len(s)-1 {
		return false
	}
	e, err := strconv.ParseInt(s[i+1:], 10, 64)
	if err != nil {
		return false
	}
	e32 := int32(e)
	mantissa := strings.TrimLeft(s[:i], "+-")
	mantissa = strings.TrimLeft(mantissa, "0")
	num, denom, _ := strings.Cut(mantissa, ".")
	if int32(18-len(num)-len(denom)) >= 0 && e32-int32(len(denom)) >= -9 {
		return false // int64 fast path
	}
	s1 := int32(len(denom)) + -e32
	shift := 9 - s1
	return shift > 20000 || shift < -1000000
}

func quantityPB(s string) []byte {
	pb := []byte{0x0a}
	pb = appendVarint(pb, uint64(len(s)))
	return append(pb, s...)
}

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func quantityVectors() []map[string]any {
	inputs := quantityEdgeCases()
	for i := 0; i < 6000; i++ {
		inputs = append(inputs, randomQuantity())
	}
	seen := map[string]bool{}
	vectors := []map[string]any{}
	// the empty message: field 1 absent
	{
		j, err := parseQuantity(nil)
		if err != nil {
			fail(err)
		}
		vectors = append(vectors, map[string]any{"pb": "", "json": j})
	}
	for _, s := range inputs {
		if seen[s] {
			continue
		}
		seen[s] = true
		if tooSlowForGo(s) {
			continue
		}
		pb := quantityPB(s)
		j, err := parseQuantity(pb)
		v := map[string]any{"hex": hex.EncodeToString([]byte(s)), "pb": hex.EncodeToString(pb)}
		if utf8.ValidString(s) {
			v["s"] = s
		}
		if err != nil {
			v["json"] = nil
			v["error"] = err.Error()
		} else {
			v["json"] = j
		}
		vectors = append(vectors, v)
	}
	return vectors
}
