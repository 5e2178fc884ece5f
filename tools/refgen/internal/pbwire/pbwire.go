// Package pbwire reads the fields of protobuf messages without a schema, and writes length-delimited fields: what the
// vector programs need to take the committed fixture objects apart and build variants of them.
package pbwire

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	pkgruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/watchwire/watchwire/tools/refgen/internal/watchframes"
	"github.com/watchwire/watchwire/tools/refgen/kinds"
)

// Field is one field of a message: its tag, and where it lies.
type Field struct {
	Tag        uint64
	Start, End int // the whole field, tag included
	Value      int // start of the value: for length-delimited fields, of the contents (after the length)
}

// FieldsOf lists the fields of msg, or returns false if msg does not parse as a message (groups included: they are
// not read here).
func FieldsOf(msg []byte) ([]Field, bool) {
	var out []Field
	p := 0
	for p < len(msg) {
		start := p
		tag, n := binary.Uvarint(msg[p:])
		if n <= 0 || tag>>3 == 0 || tag>>3 > 1<<29-1 {
			return nil, false
		}
		p += n
		value := p
		switch tag & 7 {
		case 0:
			_, n := binary.Uvarint(msg[p:])
			if n <= 0 {
				return nil, false
			}
			p += n
		case 1:
			p += 8
		case 5:
			p += 4
		case 2:
			l, n := binary.Uvarint(msg[p:])
			if n <= 0 || l > uint64(len(msg)-p-n) {
				return nil, false
			}
			value = p + n
			p += n + int(l)
		default:
			return nil, false
		}
		if p > len(msg) {
			return nil, false
		}
		out = append(out, Field{tag, start, p, value})
	}
	return out, true
}

// LenFields lists the length-delimited fields of msg, or returns false if msg does not parse as a message.
func LenFields(msg []byte) ([]Field, bool) {
	fs, ok := FieldsOf(msg)
	var out []Field
	for _, f := range fs {
		if f.Tag&7 == 2 {
			out = append(out, f)
		}
	}
	return out, ok
}

// LenField is a length-delimited field: number num, contents payload.
func LenField(num uint64, payload []byte) []byte {
	out := binary.AppendUvarint(nil, num<<3|2)
	out = binary.AppendUvarint(out, uint64(len(payload)))
	return append(out, payload...)
}

// StreamEnvelopes returns the objects of a fixture watch stream as they stand in its events (WatchEvent.object.raw:
// k8s\0 and the runtime.Unknown envelope), by event type.
func StreamEnvelopes(data []byte) (map[string][]byte, error) {
	envelopes := map[string][]byte{}
	frames, err := watchframes.Split(data)
	if err != nil {
		return nil, err
	}
	for _, frame := range frames {
		var ev metav1.WatchEvent
		if err := ev.Unmarshal(frame); err != nil {
			return nil, err
		}
		if !bytes.HasPrefix(ev.Object.Raw, []byte("k8s\x00")) {
			return nil, fmt.Errorf("object without the k8s\\0 magic")
		}
		envelopes[ev.Type] = ev.Object.Raw
	}
	return envelopes, nil
}

// StreamObjects returns the objects (runtime.Unknown raw) of a fixture watch stream by event type; the stream must
// hold an ADDED and a MODIFIED event.
func StreamObjects(data []byte) (map[string][]byte, error) {
	envelopes, err := StreamEnvelopes(data)
	if err != nil {
		return nil, err
	}
	objects := map[string][]byte{}
	for event, envelope := range envelopes {
		var unk pkgruntime.Unknown
		if err := unk.Unmarshal(envelope[4:]); err != nil {
			return nil, err
		}
		objects[event] = unk.Raw
	}
	if objects["ADDED"] == nil || objects["MODIFIED"] == nil {
		return nil, fmt.Errorf("no ADDED or MODIFIED object")
	}
	return objects, nil
}

// ReadKindStream reads the fixture stream of a kind, <dir>/streams/<apiVersion with _ for />.<Kind>.pb, and returns
// that file's name without .pb too.
func ReadKindStream(dir, apiVersion, kind string) (string, []byte, error) {
	base := strings.ReplaceAll(apiVersion, "/", "_") + "." + kind
	data, err := os.ReadFile(filepath.Join(dir, "streams", base+".pb"))
	return base, data, err
}

// KindStreamObjects reads the objects of the fixture stream of a kind (see ReadKindStream) as StreamObjects does, and
// returns that file's name without .pb too.
func KindStreamObjects(dir, apiVersion, kind string) (string, map[string][]byte, error) {
	base, data, err := ReadKindStream(dir, apiVersion, kind)
	if err != nil {
		return base, nil, err
	}
	objects, err := StreamObjects(data)
	if err != nil {
		return base, nil, fmt.Errorf("%s: %w", base, err)
	}
	return base, objects, nil
}

// GoJSON has Go decode pb as an object of kind k, as client-go's protobuf serializer does (the kind's generated
// Unmarshal), and returns the JSON encoding/json writes for it (kind and apiVersion set), or the error of Unmarshal
// ("Unmarshal: ...") or json.Marshal ("json.Marshal: ...").
func GoJSON(k kinds.Kind, pb []byte) ([]byte, error) {
	obj := k.New()
	if err := obj.(interface{ Unmarshal([]byte) error }).Unmarshal(pb); err != nil {
		return nil, fmt.Errorf("Unmarshal: %w", err)
	}
	obj.GetObjectKind().SetGroupVersionKind(k.GVK)
	out, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("json.Marshal: %w", err)
	}
	return out, nil
}

// KindRand is the random source of one vector program (purpose: "merge", "damage", ...) for kind k, the same on every
// run: a PCG seeded with the FNV-1a hash of "purpose:apiVersion/Kind", its stream the purpose's first 8 bytes read
// big-endian.
func KindRand(purpose string, k kinds.Kind) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(purpose + ":" + k.APIVersion() + "/" + k.GVK.Kind))
	var stream uint64
	for i := 0; i < len(purpose) && i < 8; i++ {
		stream = stream<<8 | uint64(purpose[i])
	}
	return rand.New(rand.NewPCG(h.Sum64(), stream))
}
