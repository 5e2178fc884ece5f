// Command mergevectors writes fixtures/kubernetes/merge/vectors.json: objects of every kind whose protobuf bytes
// repeat fields, as protobuf allows (a singular field met again is merged into what was read before: its scalars
// replace, its embedded messages merge, its repeated fields and maps grow), and carry unknown fields encoded as
// proto2 groups, with the JSON that Go's encoding/json writes for the object the kind's generated Unmarshal makes of
// those bytes (or Unmarshal's or json.Marshal's error).
//
// Each object starts from the committed fixture streams (fixtures/kubernetes/streams/*.pb: the ADDED object, which
// is the realistic one, and the MODIFIED one, which is fuzzed), so a vector names its parts instead of repeating
// their bytes: "ADDED", "MODIFIED", or "hex:..." (bytes made here). The bytes made here are top-level fields that
// reach, along a path of length-delimited fields found in the object itself, one of: an empty message (a field met
// again with nothing in it), a copy of a field found there or in the other object at the same path, or an unknown
// field encoded as a group (with nested fields and groups in it). Nothing about the JSON is computed here.
//
// Usage (from tools/refgen; the fixtures step must have run): go run ./cmd/mergevectors -fixtures ../../fixtures/kubernetes
package main

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/watchwire/watchwire/tools/refgen/internal/pbwire"
	"github.com/watchwire/watchwire/tools/refgen/internal/vectorfile"
	"github.com/watchwire/watchwire/tools/refgen/kinds"
	"github.com/watchwire/watchwire/tools/refgen/realistic"
)

// Variants per kind: 12 for the kinds whose realistic object is hand-written and under maxRichBytes (they hold the
// special types: IntOrString, Quantity, RawExtension, Time, FieldsV1), one for the others (Lists of hand-written
// items included: they repeat their item's fields); and, where the two objects are under maxPairBytes together,
// one more: both, one after the other. The limits keep the file small, as every vector carries its whole JSON.
const richVariants, otherVariants, maxRichBytes, maxPairBytes = 12, 1, 24 << 10, 4 << 10

// The most fields one vector of everywhere() appends.
const maxWrappers = 600

type vector struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Parts      []string        `json:"parts"`
	JSON       json.RawMessage `json:"json,omitempty"`
	Error      string          `json:"error,omitempty"`
}

func main() {
	dir := flag.String("fixtures", "../../fixtures/kubernetes", "the fixtures folder (streams/ is read, merge/ is replaced)")
	flag.Parse()
	var vectors []vector
	for _, k := range kinds.All() {
		_, objects, err := pbwire.KindStreamObjects(*dir, k.APIVersion(), k.GVK.Kind)
		if err != nil {
			fail(err)
		}
		rng := pbwire.KindRand("merge", k)
		n := otherVariants
		added, modified := objects["ADDED"], objects["MODIFIED"]
		if realistic.Source(k) == "handwritten" && len(added) <= maxRichBytes {
			n = richVariants
		}
		if len(added)+len(modified) <= maxPairBytes {
			// Two whole objects, one after the other: Go's merge of the second into the first.
			vectors = append(vectors, run(k, []string{"ADDED", "MODIFIED"}, append(append([]byte{}, added...), modified...)))
		}
		if n == richVariants {
			// Every embedded message met again, empty; and each of its fields met again alone (a scalar again, an item
			// more, a map entry again; and for IntOrString, Quantity and RawExtension one part at a time).
			empty := everywhere(added, func([]byte) [][]byte { return [][]byte{nil} })
			vectors = append(vectors, run(k, []string{"ADDED", "hex:" + hex.EncodeToString(empty)}, append(append([]byte{}, added...), empty...)))
			alone := everywhere(added, func(contents []byte) [][]byte {
				fs, _ := pbwire.FieldsOf(contents)
				var out [][]byte
				for _, f := range fs {
					out = append(out, contents[f.Start:f.End])
				}
				return out
			})
			vectors = append(vectors, run(k, []string{"ADDED", "hex:" + hex.EncodeToString(alone)}, append(append([]byte{}, added...), alone...)))
			// metadata (1) { managedFields (17) { fieldsV1 (7) { Raw (1): empty } } }: a FieldsV1 with empty bytes.
			suffix := pbwire.LenField(1, pbwire.LenField(17, pbwire.LenField(7, pbwire.LenField(1, nil))))
			vectors = append(vectors, run(k, []string{"ADDED", "hex:" + hex.EncodeToString(suffix)}, append(append([]byte{}, added...), suffix...)))
		}
		for i := 0; i < n; i++ {
			var suffix []byte
			for ops := 1 + rng.IntN(3); ops > 0; ops-- {
				suffix = append(suffix, along(rng, added, modified)...)
			}
			parts := []string{"ADDED", "hex:" + hex.EncodeToString(suffix)}
			pb := append(append([]byte{}, added...), suffix...)
			vectors = append(vectors, run(k, parts, pb))
		}
	}
	out := filepath.Join(*dir, "merge")
	if err := os.RemoveAll(out); err != nil {
		fail(err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		fail(err)
	}
	write(filepath.Join(out, "vectors.json"), vectors)
}

// run has Go decode pb as an object of kind k: the JSON of the result, or the error.
func run(k kinds.Kind, parts []string, pb []byte) vector {
	v := vector{APIVersion: k.APIVersion(), Kind: k.GVK.Kind, Parts: parts}
	out, err := pbwire.GoJSON(k, pb)
	if err != nil {
		v.Error = err.Error()
		return v
	}
	v.JSON = out
	return v
}

// everywhere returns top-level fields that reach every length-delimited field of obj that parses as a message (up
// to maxWrappers of them, depth first), each carrying what at(contents) returns for it, one field for each item.
func everywhere(obj []byte, at func(contents []byte) [][]byte) []byte {
	var out []byte
	count := 0
	var walk func(msg []byte, path []uint64)
	walk = func(msg []byte, path []uint64) {
		fs, ok := pbwire.LenFields(msg)
		if !ok {
			return
		}
		for _, f := range fs {
			inner := msg[f.Value:f.End]
			if sub, ok := pbwire.FieldsOf(inner); !ok || len(sub) == 0 || len(path) >= 12 {
				continue
			}
			here := append(append([]uint64{}, path...), f.Tag)
			for _, payload := range at(inner) {
				if count++; count > maxWrappers {
					return
				}
				for i := len(here) - 1; i >= 0; i-- {
					payload = pbwire.LenField(here[i]>>3, payload)
				}
				out = append(out, payload...)
			}
			walk(inner, here)
		}
	}
	walk(obj, nil)
	return out
}

// along returns one top-level field that reaches, through a random path of length-delimited fields of obj, an
// empty message, a copy of a field there (from obj or, at the same path, from other), or an unknown group.
func along(rng *rand.Rand, obj, other []byte) []byte {
	var path []uint64
	cur, alt := obj, other
	var payload []byte
	for depth := 0; depth < 10; depth++ {
		fs, ok := pbwire.LenFields(cur)
		if !ok || len(fs) == 0 {
			break
		}
		f := fs[rng.IntN(len(fs))]
		inner := cur[f.Value:f.End]
		if sub, ok := pbwire.LenFields(inner); ok && len(sub) > 0 && rng.IntN(3) != 0 {
			path = append(path, f.Tag)
			cur = inner
			alt = sameField(alt, f.Tag)
			continue
		}
		switch rng.IntN(4) {
		case 0:
			payload = append(binary.AppendUvarint(nil, f.Tag), 0)
		case 1:
			payload = append([]byte{}, cur[f.Start:f.End]...)
		case 2:
			// The same field of the other object, if it has one here; else this one.
			if afs, ok := pbwire.LenFields(alt); ok {
				for _, af := range afs {
					if af.Tag == f.Tag {
						payload = append([]byte{}, alt[af.Start:af.End]...)
						break
					}
				}
			}
			if payload == nil {
				payload = append([]byte{}, cur[f.Start:f.End]...)
			}
		default:
			payload = group(rng, 0)
		}
		break
	}
	if payload == nil {
		payload = group(rng, 0)
	}
	for i := len(path) - 1; i >= 0; i-- {
		payload = pbwire.LenField(path[i]>>3, payload)
	}
	return payload
}

// sameField returns the contents of the first length-delimited field of msg with this tag (nil if none).
func sameField(msg []byte, tag uint64) []byte {
	if fs, ok := pbwire.LenFields(msg); ok {
		for _, f := range fs {
			if f.Tag == tag {
				return msg[f.Value:f.End]
			}
		}
	}
	return nil
}

// group is an unknown field (number 9000-9049, which no Kubernetes message uses) encoded as a group, holding a few
// fields of every other wire type and, now and then, a nested group.
func group(rng *rand.Rand, depth int) []byte {
	num := uint64(9000 + rng.IntN(50))
	out := binary.AppendUvarint(nil, num<<3|3)
	for i := rng.IntN(4); i > 0; i-- {
		f := uint64(1 + rng.IntN(20))
		switch rng.IntN(5) {
		case 0:
			out = binary.AppendUvarint(binary.AppendUvarint(out, f<<3), rng.Uint64())
		case 1:
			out = append(binary.AppendUvarint(out, f<<3|2), 2, 'h', 'i')
		case 2:
			out = append(binary.AppendUvarint(out, f<<3|5), 1, 2, 3, 4)
		case 3:
			out = append(binary.AppendUvarint(out, f<<3|1), 1, 2, 3, 4, 5, 6, 7, 8)
		default:
			if depth < 3 {
				out = append(out, group(rng, depth+1)...)
			}
		}
	}
	return binary.AppendUvarint(out, num<<3|4)
}

func write(path string, vectors []vector) {
	all := make([]any, len(vectors))
	for i, v := range vectors {
		all[i] = v
	}
	header := map[string]any{
		"description": "objects whose protobuf repeats fields and carries unknown groups, to json.Marshal of what the kind's generated Unmarshal makes of them; parts: ADDED/MODIFIED = that event's object in streams/<kind>.pb, hex: = bytes",
		"generator":   "tools/refgen/cmd/mergevectors",
	}
	if _, err := vectorfile.Write(path, header, []string{"k8s.io/"}, all); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "mergevectors:", err)
	os.Exit(1)
}
