// Command damagevectors writes fixtures/kubernetes/damage/vectors.json: damaged copies of the objects of every kind,
// each with what Go makes of it: the JSON that Go's encoding/json writes for the object the kind's generated
// Unmarshal (gogo-protobuf's, which client-go's protobuf serializer calls) makes of the bytes, or the error of
// Unmarshal or json.Marshal. A decoder that is to give exactly Go's object must then accept exactly the damaged bytes
// Go accepts, and decode them to the same values.
//
// Each vector starts from an object of the committed fixture streams (fixtures/kubernetes/streams/*.pb: the ADDED
// object, the realistic one, or the MODIFIED one, fuzzed) and names the edits made to its bytes, applied in order,
// each at a position of the bytes as the edits before it left them. The damage is of two sorts:
//   - byte damage, at random positions or at a tag, a length or a varint: a byte replaced, a bit flipped, a byte
//     stepped up or down, bytes deleted or inserted, the object cut short;
//   - encodings that are valid but unusual, or that gogo's generated code reads more loosely than protobuf-go does:
//     a field's wire type changed; a varint, a tag or a length in more bytes than it needs; a 10-byte varint whose
//     last byte carries bits beyond the 64th; a tag with bits beyond the 35th (Go's field number is int32(wire>>3));
//     unknown groups whose end does not match their start, that hold a tag of field 0, are left open, or nest
//     deeper than protobuf-go allows. The lengths of the messages around a changed field are rewritten to fit.
//
// A vector's JSON is written as the differences from the JSON of its undamaged object (the event's object in the
// kind's streams/*.json, which this program checks is what Go gives for the undamaged bytes), so that the file stays
// small: `patch` is a list of {"p": path, "v": value} (set) and {"p": path, "d": true} (delete), where a path is a
// list of keys and array indexes. Nothing about the JSON is computed here beyond that difference.
//
// It also writes fixtures/kubernetes/damage/envelopes.json: the envelope of every kind's ADDED object as its event
// holds it (k8s\0, then runtime.Unknown), damaged the same ways (and at the prefix), with what runtime.Unknown's
// generated Unmarshal makes of it, or the error.
//
// Usage (from tools/refgen; the fixtures step must have run): go run ./cmd/damagevectors -fixtures ../../fixtures/kubernetes
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sort"

	pkgruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/watchwire/watchwire/tools/refgen/internal/pbwire"
	"github.com/watchwire/watchwire/tools/refgen/internal/vectorfile"
	"github.com/watchwire/watchwire/tools/refgen/kinds"
	"github.com/watchwire/watchwire/tools/refgen/realistic"
)

// Vectors per kind: more for the kinds whose realistic object is hand-written (they hold the special types:
// IntOrString, Quantity, RawExtension, Time, FieldsV1) and under maxRichBytes, fewer for the others.
const richVariants, otherVariants, maxRichBytes = 40, 8, 24 << 10

// How deep groups nest in the "group-deep" damage: past protobuf-go's recursion limit of 10 000.
const deepGroups = 10_050

// The sorts of damage, in the order a vector's sort is drawn from (each equally likely).
var sorts = []string{
	"byte", "bit", "step", "delete", "insert", "truncate",
	"wiretype", "varint-long", "varint-10", "tag-long", "tag-high", "len-long",
	"group-mismatch", "group-field0", "group-open", "group-junk", "group-deep",
}

// edit replaces Del bytes at At with Ins repeated Rep times (Rep 0 means once).
type edit struct {
	At  int
	Del int
	Ins []byte
	Rep int
}

func (e edit) MarshalJSON() ([]byte, error) {
	v := []any{e.At, e.Del, hex.EncodeToString(e.Ins)}
	if e.Rep > 1 {
		v = append(v, e.Rep)
	}
	return json.Marshal(v)
}

type vector struct {
	APIVersion string           `json:"apiVersion"`
	Kind       string           `json:"kind"`
	Base       string           `json:"base"`
	Damage     string           `json:"damage"`
	Edits      []edit           `json:"edits"`
	Patch      []map[string]any `json:"patch,omitempty"`
	Error      string           `json:"error,omitempty"`
}

func main() {
	dir := flag.String("fixtures", "../../fixtures/kubernetes", "the fixtures folder (streams/ is read, damage/ is replaced)")
	flag.Parse()
	var vectors []any
	for _, k := range kinds.All() {
		base, objects, err := pbwire.KindStreamObjects(*dir, k.APIVersion(), k.GVK.Kind)
		if err != nil {
			fail(err)
		}
		jsonObjects, err := streamJSON(filepath.Join(*dir, "streams", base+".json"))
		if err != nil {
			fail(fmt.Errorf("%s: %w", base, err))
		}
		for _, event := range []string{"ADDED", "MODIFIED"} {
			got, err := goJSON(k, objects[event])
			if err != nil || !reflect.DeepEqual(got, jsonObjects[event]) {
				fail(fmt.Errorf("%s %s: Go's JSON of the undamaged object is not the stream's (%v)", base, event, err))
			}
		}
		rng := pbwire.KindRand("damage", k)
		n := otherVariants
		if realistic.Source(k) == "handwritten" && len(objects["ADDED"]) <= maxRichBytes {
			n = richVariants
		}
		offset := rng.IntN(len(sorts))
		for i := 0; i < n; i++ {
			event := "ADDED"
			if rng.IntN(5) < 2 {
				event = "MODIFIED"
			}
			original := objects[event]
			// Every sort once (from a place drawn per kind), then sorts drawn at random.
			what := sorts[(offset+i)%len(sorts)]
			if i >= len(sorts) {
				what = sorts[rng.IntN(len(sorts))]
			}
			edits := damage(rng, what, original, 12)
			damaged := apply(original, edits)
			v := vector{APIVersion: k.APIVersion(), Kind: k.GVK.Kind, Base: event, Damage: what, Edits: edits}
			if got, err := goJSON(k, damaged); err != nil {
				v.Error = err.Error()
			} else {
				v.Patch = []map[string]any{}
				diff(nil, jsonObjects[event], got, &v.Patch)
			}
			vectors = append(vectors, v)
		}
	}
	envelopeVectors := envelopes(*dir)
	out := filepath.Join(*dir, "damage")
	if err := os.RemoveAll(out); err != nil {
		fail(err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		fail(err)
	}
	header := map[string]any{
		"description": "damaged objects of every kind, to the differences of json.Marshal of what the kind's generated Unmarshal makes of them from the undamaged object's JSON, or the error; base: that event's object in streams/<kind>.pb and .json; edits: [at, delete, insert hex, repeat], applied in order",
		"generator":   "tools/refgen/cmd/damagevectors",
	}
	if _, err := vectorfile.Write(filepath.Join(out, "vectors.json"), header, []string{"k8s.io/"}, vectors); err != nil {
		fail(err)
	}
	header = map[string]any{
		"description": "damaged envelopes (k8s\\0 and runtime.Unknown) of every kind's ADDED object, to what runtime.Unknown's generated Unmarshal makes of them (typeMeta, contentEncoding, contentType, the length and SHA-256 of raw), or the error (a missing k8s\\0 prefix, as the protobuf serializer checks it, or Unmarshal's); base: the envelope of that event's object in streams/<kind>.pb; edits as in vectors.json, on the whole envelope",
		"generator":   "tools/refgen/cmd/damagevectors",
	}
	if _, err := vectorfile.Write(filepath.Join(out, "envelopes.json"), header, []string{"k8s.io/"}, envelopeVectors); err != nil {
		fail(err)
	}
}

// Envelope vectors per kind, and the sorts of damage they draw from: those of the objects, and a damaged prefix.
const envelopeVariants = 6

var envelopeSorts = append([]string{"magic"}, sorts[:len(sorts)-1]...) // no 10 050-deep groups: objects have them

type envelopeVector struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Damage     string   `json:"damage"`
	Edits      []edit   `json:"edits"`
	Unknown    *unknown `json:"unknown,omitempty"`
	Error      string   `json:"error,omitempty"`
}

// unknown is what runtime.Unknown's Unmarshal made of an envelope (its strings as encoding/json writes them).
type unknown struct {
	APIVersion      string `json:"apiVersion"`
	Kind            string `json:"kind"`
	ContentEncoding string `json:"contentEncoding"`
	ContentType     string `json:"contentType"`
	RawLength       int    `json:"rawLength"`
	RawSHA256       string `json:"rawSha256"`
}

// envelopes damages the envelope of every kind's ADDED object (k8s\0, then runtime.Unknown) and has Go read it.
func envelopes(dir string) []any {
	var out []any
	for _, k := range kinds.All() {
		_, data, err := pbwire.ReadKindStream(dir, k.APIVersion(), k.GVK.Kind)
		if err != nil {
			fail(err)
		}
		all, err := pbwire.StreamEnvelopes(data)
		if err != nil {
			fail(err)
		}
		original := all["ADDED"]
		rng := pbwire.KindRand("envelope", k)
		offset := rng.IntN(len(envelopeSorts))
		for i := 0; i < envelopeVariants; i++ {
			what := envelopeSorts[(offset+i)%len(envelopeSorts)]
			var edits []edit
			if what == "magic" {
				at := rng.IntN(4)
				edits = []edit{{At: at, Del: 1, Ins: []byte{original[at] ^ byte(1+rng.IntN(255))}}}
			} else {
				// The damage of the runtime.Unknown message (its fields, typeMeta's, and raw's top-level ones), after k8s\0.
				edits = damage(rng, what, original[4:], 1)
				for j := range edits {
					edits[j].At += 4
				}
			}
			v := envelopeVector{APIVersion: k.APIVersion(), Kind: k.GVK.Kind, Damage: what, Edits: edits}
			damaged := apply(original, edits)
			var unk pkgruntime.Unknown
			switch {
			case !bytes.HasPrefix(damaged, []byte("k8s\x00")):
				v.Error = "no k8s\\0 prefix"
			default:
				if err := unk.Unmarshal(damaged[4:]); err != nil {
					v.Error = "Unmarshal: " + err.Error()
				} else {
					sum := sha256.Sum256(unk.Raw)
					v.Unknown = &unknown{unk.APIVersion, unk.Kind, unk.ContentEncoding, unk.ContentType, len(unk.Raw), hex.EncodeToString(sum[:])}
				}
			}
			out = append(out, v)
		}
	}
	return out
}

// goJSON has Go decode pb as an object of kind k and returns its JSON as encoding/json reads it back into an any (so
// numbers are float64, as for JSON.parse), or the error of Unmarshal or json.Marshal (or a panic, should one happen).
func goJSON(k kinds.Kind, pb []byte) (value any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	out, err := pbwire.GoJSON(k, pb)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(out, &value); err != nil {
		return nil, fmt.Errorf("reading back: %w", err)
	}
	return value, nil
}

// streamJSON returns the objects of a fixture JSON watch stream by event type.
func streamJSON(path string) (map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	s := bufio.NewScanner(bytes.NewReader(data))
	s.Buffer(nil, 64<<20)
	for s.Scan() {
		var ev struct {
			Type   string `json:"type"`
			Object any    `json:"object"`
		}
		if err := json.Unmarshal(s.Bytes(), &ev); err != nil {
			return nil, err
		}
		out[ev.Type] = ev.Object
	}
	return out, s.Err()
}

// diff appends to out the operations that turn a into b: a set where a value differs (a whole array where the
// lengths differ), a delete where a key went away.
func diff(path []any, a, b any, out *[]map[string]any) {
	at := func(step any) []any { return append(append([]any{}, path...), step) }
	switch av := a.(type) {
	case map[string]any:
		if bv, ok := b.(map[string]any); ok {
			for _, key := range sortedKeys(av) {
				if y, ok := bv[key]; ok {
					diff(at(key), av[key], y, out)
				} else {
					*out = append(*out, map[string]any{"p": at(key), "d": true})
				}
			}
			for _, key := range sortedKeys(bv) {
				if _, ok := av[key]; !ok {
					*out = append(*out, map[string]any{"p": at(key), "v": bv[key]})
				}
			}
			return
		}
	case []any:
		if bv, ok := b.([]any); ok && len(bv) == len(av) {
			for i := range av {
				diff(at(i), av[i], bv[i], out)
			}
			return
		}
	default:
		if reflect.DeepEqual(a, b) {
			return
		}
	}
	*out = append(*out, map[string]any{"p": append([]any{}, path...), "v": b})
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func apply(b []byte, edits []edit) []byte {
	out := append([]byte{}, b...)
	for _, e := range edits {
		ins := bytes.Repeat(e.Ins, max(e.Rep, 1))
		out = append(append(append([]byte{}, out[:e.At]...), ins...), out[e.At+e.Del:]...)
	}
	return out
}

// site is a field of the object at any depth: where it lies (absolute), and the length prefixes of the
// length-delimited fields around it, outermost first.
type site struct {
	tag                uint64
	start, value, end  int
	tagLen             int
	around             []prefix
	contentsStart, len int // for a length-delimited field: its contents
}

type prefix struct{ at, size, contents int }

// sites lists the fields of msg (at offset base) and, depth first, of every length-delimited field whose contents
// parse as a message, up to maxDepth deep.
func sites(msg []byte, base int, around []prefix, depth, maxDepth int, out *[]site) {
	fs, ok := pbwire.FieldsOf(msg)
	if !ok {
		return
	}
	for _, f := range fs {
		_, tagLen := binary.Uvarint(msg[f.Start:])
		s := site{tag: f.Tag, start: base + f.Start, value: base + f.Value, end: base + f.End, tagLen: tagLen, around: around}
		if f.Tag&7 == 2 {
			s.contentsStart, s.len = base+f.Value, f.End-f.Value
		}
		*out = append(*out, s)
		if f.Tag&7 == 2 && depth < maxDepth {
			inner := msg[f.Value:f.End]
			if sub, ok := pbwire.FieldsOf(inner); ok && len(sub) > 0 {
				lenAt := f.Start + tagLen
				p := prefix{at: base + lenAt, size: f.Value - lenAt, contents: f.End - f.Value}
				sites(inner, base+f.Value, append(append([]prefix{}, around...), p), depth+1, maxDepth, out)
			}
		}
	}
}

// replace returns the edits that put replacement in place of the field s and rewrite the length prefixes around it.
func replace(obj []byte, s site, replacement []byte) []edit {
	// Only the bytes that change (a tag or a length before contents that stay): the file stays small.
	old := obj[s.start:s.end]
	pre := 0
	for pre < len(old) && pre < len(replacement) && old[pre] == replacement[pre] {
		pre++
	}
	suf := 0
	for suf < len(old)-pre && suf < len(replacement)-pre && old[len(old)-1-suf] == replacement[len(replacement)-1-suf] {
		suf++
	}
	changed := edit{At: s.start + pre, Del: len(old) - pre - suf, Ins: replacement[pre : len(replacement)-suf]}
	return append([]edit{changed}, resized(s.around, len(replacement)-len(old))...)
}

// resized returns the edits that rewrite the length prefixes around a field whose size changed by delta bytes, from
// the innermost out (so that each edit's position is still that of the original bytes).
func resized(around []prefix, delta int) []edit {
	var edits []edit
	for i := len(around) - 1; i >= 0 && delta != 0; i-- {
		p := around[i]
		v := binary.AppendUvarint(nil, uint64(p.contents+delta))
		edits = append(edits, edit{At: p.at, Del: p.size, Ins: v})
		delta += len(v) - p.size
	}
	return edits
}

// padded is the varint of x in n bytes (n >= its minimal size, at most 10): continuation bits on zero bytes.
func padded(x uint64, n int) []byte {
	out := binary.AppendUvarint(nil, x)
	if len(out) >= n {
		return out
	}
	out[len(out)-1] |= 0x80
	for len(out) < n-1 {
		out = append(out, 0x80)
	}
	return append(out, 0)
}

// damage draws the edits of one vector of the given sort.
func damage(rng *rand.Rand, what string, obj []byte, maxDepth int) []edit {
	var all []site
	sites(obj, 0, nil, 0, maxDepth, &all)
	pick := func(want func(site) bool) (site, bool) {
		var c []site
		for _, s := range all {
			if want(s) {
				c = append(c, s)
			}
		}
		if len(c) == 0 {
			return site{}, false
		}
		return c[rng.IntN(len(c))], true
	}
	every := func(site) bool { return true }
	// A position: half the time a tag, a length or a varint value of some field; else any byte.
	position := func(n int) int {
		if len(all) > 0 && rng.IntN(2) == 0 {
			s := all[rng.IntN(len(all))]
			switch {
			case rng.IntN(2) == 0:
				return s.start
			case s.tag&7 == 2:
				return s.start + s.tagLen
			default:
				return s.value + rng.IntN(s.end-s.value)
			}
		}
		return rng.IntN(n)
	}
	randomBytes := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	if len(obj) == 0 {
		return []edit{{At: 0, Del: 0, Ins: randomBytes(1 + rng.IntN(4))}}
	}
	switch what {
	case "byte":
		at := position(len(obj))
		return []edit{{At: at, Del: 1, Ins: []byte{byte(rng.Uint32())}}}
	case "bit":
		at := position(len(obj))
		return []edit{{At: at, Del: 1, Ins: []byte{obj[at] ^ 1<<rng.IntN(8)}}}
	case "step":
		at := position(len(obj))
		return []edit{{At: at, Del: 1, Ins: []byte{obj[at] + byte(1-2*rng.IntN(2))}}}
	case "delete":
		at := position(len(obj))
		return []edit{{At: at, Del: min(1+rng.IntN(4), len(obj)-at)}}
	case "insert":
		return []edit{{At: position(len(obj) + 1), Ins: randomBytes(1 + rng.IntN(4))}}
	case "truncate":
		at := position(len(obj))
		return []edit{{At: at, Del: len(obj) - at}}
	case "wiretype":
		s, _ := pick(every)
		w := (byte(s.tag&7) + 1 + byte(rng.IntN(7))) & 7
		return []edit{{At: s.start, Del: 1, Ins: []byte{obj[s.start]&^7 | w}}}
	case "varint-long", "varint-10":
		s, ok := pick(func(s site) bool { return s.tag&7 == 0 })
		if !ok {
			return damage(rng, "tag-long", obj, maxDepth)
		}
		x, _ := binary.Uvarint(obj[s.value:])
		tag := obj[s.start:s.value]
		if what == "varint-long" {
			return replace(obj, s, append(append([]byte{}, tag...), padded(x, 10)...))
		}
		// Ten bytes whose last one carries bit 63 of x and, above it, bits that fall past the 64th.
		v := padded(x&(1<<63-1), 10)
		v[9] = byte(x>>63) | byte(1+rng.IntN(63))<<1
		return replace(obj, s, append(append([]byte{}, tag...), v...))
	case "tag-long", "tag-high":
		s, _ := pick(every)
		var t []byte
		if what == "tag-long" {
			t = padded(s.tag, s.tagLen+1+rng.IntN(10-s.tagLen))
		} else {
			// Bits from the 35th up: Go's int32(wire>>3) drops them, and keeps the field number; one time in four, bits
			// 32-34 too, which change it (to a large or a negative one).
			high := rng.Uint64() >> 29 << 35
			if rng.IntN(4) == 0 {
				high |= uint64(1+rng.IntN(7)) << 32
			}
			t = binary.AppendUvarint(nil, s.tag|high)
		}
		return replace(obj, s, append(t, obj[s.start+s.tagLen:s.end]...))
	case "len-long":
		s, ok := pick(func(s site) bool { return s.tag&7 == 2 })
		if !ok {
			return damage(rng, "tag-long", obj, maxDepth)
		}
		field := append(append([]byte{}, obj[s.start:s.start+s.tagLen]...), padded(uint64(s.len), 10)...)
		return replace(obj, s, append(field, obj[s.contentsStart:s.end]...))
	default: // groups, put among the fields of the object or of a message in it
		return groupDamage(rng, what, obj, all)
	}
}

// groupDamage puts an unknown group (field 9000-9049) before a field of the object, at any depth, or at its end.
func groupDamage(rng *rand.Rand, what string, obj []byte, all []site) []edit {
	num := uint64(9000 + rng.IntN(50))
	start := binary.AppendUvarint(nil, num<<3|3)
	end := binary.AppendUvarint(nil, num<<3|4)
	var body []byte
	switch what {
	case "group-mismatch":
		end = binary.AppendUvarint(nil, (num+1+uint64(rng.IntN(100)))<<3|4)
		body = append(binary.AppendUvarint(nil, 1<<3), 7)
	case "group-field0":
		// A tag of field 0 (and wire type 0, 2 or 5) inside the group.
		switch rng.IntN(3) {
		case 0:
			body = []byte{0x00, 0x05}
		case 1:
			body = []byte{0x02, 0x01, 'x'}
		default:
			body = []byte{0x05, 1, 2, 3, 4}
		}
	case "group-open":
		end = nil
		body = []byte{0x08, 0x01}
	case "group-deep":
		// Nested groups past protobuf-go's limit, written as repeated inserts.
		at := len(obj)
		return []edit{{At: at, Ins: start, Rep: deepGroups}, {At: at + len(start)*deepGroups, Ins: end, Rep: deepGroups}}
	default: // group-junk: a 10-byte varint with bits past the 64th, and a tag with high bits, inside the group
		v := padded(rng.Uint64()>>1, 10)
		v[9] = byte(2 + rng.IntN(126))
		body = append(append(binary.AppendUvarint(nil, 3<<3), v...), binary.AppendUvarint(nil, 4<<3|rng.Uint64()>>29<<35)...)
		body = append(body, 1)
	}
	group := append(append(append([]byte{}, start...), body...), end...)
	if len(all) == 0 || rng.IntN(4) == 0 {
		return []edit{{At: len(obj), Ins: group}}
	}
	s := all[rng.IntN(len(all))]
	// Inserted before s, inside the messages around it: their lengths grow.
	return append([]edit{{At: s.start, Ins: group}}, resized(s.around, len(group))...)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "damagevectors:", err)
	os.Exit(1)
}
