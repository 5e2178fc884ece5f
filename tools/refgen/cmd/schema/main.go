// Command schema extracts, from the Go types themselves, what watchwire's decoder generator needs for every top-level
// kind (see package kinds): per Go struct reached from a kind, its fields with protobuf field numbers and wire types
// (the `protobuf` struct tags gogo-protobuf generated), JSON names and options (the `json` tags), Go shape (pointer,
// slice, map, named slice encoded as a message) and the types whose JSON is custom (metav1.Time and friends).
//
// Usage: go run ./cmd/schema > schema.json
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"

	"github.com/watchwire/watchwire/tools/refgen/kinds"
)

// Type is a field's type as the decoder sees it.
type Type struct {
	// scalar: string bool int32 int64 uint32 uint64 float32 float64 bytes; message; special; list; map; wrappedList
	Kind string `json:"kind"`
	// The Go type (package path + name) of a message or special.
	Ref string `json:"ref,omitempty"`
	// For list and wrappedList: the element type; for map: the value type.
	Elem *Type `json:"elem,omitempty"`
	// For map: the key type (a scalar).
	Key *Type `json:"key,omitempty"`
	// Whether the Go value is a pointer (nil when absent).
	Pointer bool `json:"pointer,omitempty"`
	// The protobuf wire encoding: varint, zigzag32, zigzag64, fixed32, fixed64, bytes.
	Wire string `json:"wire,omitempty"`
}

// Field is one field of a message.
type Field struct {
	Go        string `json:"go"`
	JSON      string `json:"json"` // "" when the field has no JSON (json:"-")
	OmitEmpty bool   `json:"omitempty,omitempty"`
	OmitZero  bool   `json:"omitzero,omitempty"`
	Inline    bool   `json:"inline,omitempty"`
	Number    int    `json:"number"` // 0: no protobuf field (e.g. TypeMeta, set from the envelope)
	Repeated  bool   `json:"repeated,omitempty"`
	Type      Type   `json:"type"`
}

// Message is a Go struct encoded as a protobuf message.
type Message struct {
	Go     string  `json:"go"`
	Fields []Field `json:"fields"`
}

// KindEntry is one top-level kind.
type KindEntry struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Type       string `json:"type"`
}

// Schema is the whole output.
type Schema struct {
	Generator string              `json:"generator"`
	Modules   map[string]string   `json:"modules"`
	Kinds     []KindEntry         `json:"kinds"`
	Specials  []string            `json:"specials"`
	Messages  map[string]*Message `json:"messages"`
}

// Types whose JSON is written by a MarshalJSON of their own; the generator has a hand-written rendering of each.
var specials = map[string]bool{
	"k8s.io/apimachinery/pkg/apis/meta/v1.Time":       true,
	"k8s.io/apimachinery/pkg/apis/meta/v1.MicroTime":  true,
	"k8s.io/apimachinery/pkg/apis/meta/v1.Duration":   true,
	"k8s.io/apimachinery/pkg/apis/meta/v1.FieldsV1":   true,
	"k8s.io/apimachinery/pkg/api/resource.Quantity":   true,
	"k8s.io/apimachinery/pkg/util/intstr.IntOrString": true,
	"k8s.io/apimachinery/pkg/runtime.RawExtension":    true,
}

var jsonMarshaler = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
var textMarshaler = reflect.TypeOf((*interface{ MarshalText() ([]byte, error) })(nil)).Elem()

func name(t reflect.Type) string { return t.PkgPath() + "." + t.Name() }

type extractor struct {
	messages map[string]*Message
	used     map[string]bool
	errs     []string
}

func (x *extractor) fail(format string, args ...any) {
	x.errs = append(x.errs, fmt.Sprintf(format, args...))
}

// protoTag parses `protobuf:"bytes,1,opt,name=x,casttype=..."`.
func protoTag(tag string) (wire string, number int, repeated bool, ok bool) {
	if tag == "" {
		return "", 0, false, false
	}
	parts := strings.Split(tag, ",")
	if len(parts) < 3 {
		return "", 0, false, false
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil {
		return "", 0, false, false
	}
	return parts[0], n, parts[2] == "rep", true
}

func (x *extractor) scalar(t reflect.Type, wire string) (Type, bool) {
	switch t.Kind() {
	case reflect.String:
		return Type{Kind: "string", Wire: "bytes"}, true
	case reflect.Bool:
		return Type{Kind: "bool", Wire: "varint"}, true
	case reflect.Int32:
		return Type{Kind: "int32", Wire: orDefault(wire, "varint")}, true
	case reflect.Int64:
		return Type{Kind: "int64", Wire: orDefault(wire, "varint")}, true
	case reflect.Int:
		return Type{Kind: "int64", Wire: orDefault(wire, "varint")}, true
	case reflect.Uint32:
		return Type{Kind: "uint32", Wire: orDefault(wire, "varint")}, true
	case reflect.Uint64:
		return Type{Kind: "uint64", Wire: orDefault(wire, "varint")}, true
	case reflect.Float32:
		return Type{Kind: "float32", Wire: orDefault(wire, "fixed32")}, true
	case reflect.Float64:
		return Type{Kind: "float64", Wire: orDefault(wire, "fixed64")}, true
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return Type{Kind: "bytes", Wire: "bytes"}, true
		}
	}
	return Type{}, false
}

func orDefault(s, d string) string {
	if s == "" || s == "bytes" {
		return d
	}
	return s
}

// typeOf describes a Go type met as a field (or element/value) with the wire type of its tag.
func (x *extractor) typeOf(t reflect.Type, wire string, where string) Type {
	pointer := false
	if t.Kind() == reflect.Pointer {
		pointer = true
		t = t.Elem()
	}
	var out Type
	if t.Kind() == reflect.Struct {
		n := name(t)
		if specials[n] {
			x.used[n] = true
			out = Type{Kind: "special", Ref: n, Wire: "bytes"}
		} else {
			x.message(t)
			out = Type{Kind: "message", Ref: n, Wire: "bytes"}
		}
	} else if s, ok := x.scalar(t, wire); ok {
		out = s
		x.checkCustom(t, where)
	} else if t.Kind() == reflect.Map {
		x.checkCustom(t, where)
		k, ok := x.scalar(t.Key(), "")
		if !ok {
			x.fail("%s: map key %s", where, t.Key())
		}
		v := x.typeOf(t.Elem(), "", where+"[value]")
		out = Type{Kind: "map", Key: &k, Elem: &v, Wire: "bytes"}
	} else if t.Kind() == reflect.Slice {
		// A named slice met as a single value (not `rep`): gogo encodes it as a message { repeated items = 1 }.
		x.checkCustom(t, where)
		e := x.typeOf(t.Elem(), "", where+"[item]")
		out = Type{Kind: "wrappedList", Ref: name(t), Elem: &e, Wire: "bytes"}
	} else {
		x.fail("%s: unsupported Go type %s", where, t)
	}
	out.Pointer = pointer
	return out
}

// checkCustom fails on a non-struct type with custom JSON the generator would not know about.
func (x *extractor) checkCustom(t reflect.Type, where string) {
	if t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) ||
		t.Implements(textMarshaler) || reflect.PointerTo(t).Implements(textMarshaler) {
		x.fail("%s: %s has custom JSON", where, t)
	}
}

func (x *extractor) message(t reflect.Type) {
	n := name(t)
	if _, done := x.messages[n]; done {
		return
	}
	m := &Message{Go: n, Fields: []Field{}}
	x.messages[n] = m
	if t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) {
		x.fail("%s: custom MarshalJSON on a struct not listed as special", n)
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		where := n + "." + f.Name
		jsonTag, hasJSON := f.Tag.Lookup("json")
		jsonName, opts, _ := strings.Cut(jsonTag, ",")
		field := Field{Go: f.Name}
		if jsonName == "-" && opts == "" {
			field.JSON = ""
		} else {
			field.JSON = jsonName
			if jsonName == "" {
				if f.Anonymous && f.Type.Kind() == reflect.Struct || (f.Anonymous && opts == "inline") {
					field.Inline = true
				} else if strings.Contains(","+opts+",", ",inline,") {
					field.Inline = true
				} else {
					field.JSON = f.Name
				}
			}
			if !hasJSON {
				if f.Anonymous {
					field.Inline = true
				} else {
					field.JSON = f.Name
				}
			}
			for _, o := range strings.Split(opts, ",") {
				switch o {
				case "omitempty":
					field.OmitEmpty = true
				case "omitzero":
					field.OmitZero = true
				case "inline", "", "string":
					if o == "string" {
						x.fail("%s: json ,string option", where)
					}
				default:
					x.fail("%s: json option %q", where, o)
				}
			}
		}
		if field.Inline {
			field.JSON = ""
		}
		wire, number, repeated, ok := protoTag(f.Tag.Get("protobuf"))
		if !ok {
			if f.Tag.Get("protobuf") != "" {
				x.fail("%s: protobuf tag %q", where, f.Tag.Get("protobuf"))
			}
			// No protobuf field: only TypeMeta (from the envelope) and ListMeta-less oddities are expected here.
			if name(f.Type) != "k8s.io/apimachinery/pkg/apis/meta/v1.TypeMeta" {
				x.fail("%s: field without protobuf tag (json %q)", where, field.JSON)
			}
			field.Number = 0
			field.Type = Type{Kind: "message", Ref: name(f.Type)}
			m.Fields = append(m.Fields, field)
			continue
		}
		field.Number = number
		// Some tags say `rep` on a scalar (core/v1 AttachedVolume.Name); the generated code reads a scalar there.
		if repeated && (f.Type.Kind() != reflect.Slice || f.Type.Elem().Kind() == reflect.Uint8) {
			repeated = false
		}
		// And some say `opt` on an unnamed slice that generated.proto declares `repeated`
		// (admissionregistration/v1 ValidatingWebhook.MatchConditions): an unnamed slice is always repeated,
		// a named one (ExtraValue) is a message of its own.
		if f.Type.Kind() == reflect.Slice && f.Type.Name() == "" && f.Type.Elem().Kind() != reflect.Uint8 {
			repeated = true
		}
		field.Repeated = repeated
		if repeated {
			e := x.typeOf(f.Type.Elem(), wire, where+"[item]")
			x.checkCustom(f.Type, where)
			field.Type = Type{Kind: "list", Elem: &e}
		} else if f.Type.Kind() == reflect.Map {
			field.Type = x.typeOf(f.Type, wire, where)
			// Map entry key/value encodings come from protobuf_key / protobuf_val.
			kw, kn, _, _ := protoTag(f.Tag.Get("protobuf_key"))
			vw, vn, _, _ := protoTag(f.Tag.Get("protobuf_val"))
			// Newer k8s.io/api drops these tags: key and value are then encoded as their Go types say.
			if (kn != 0 && kn != 1) || (vn != 0 && vn != 2) {
				x.fail("%s: map entry tags %q %q", where, f.Tag.Get("protobuf_key"), f.Tag.Get("protobuf_val"))
			}
			field.Type.Key.Wire = fixWire(field.Type.Key, kw)
			field.Type.Elem.Wire = fixWire(field.Type.Elem, vw)
		} else {
			field.Type = x.typeOf(f.Type, wire, where)
		}
		field.Type.Wire = fixWire(&field.Type, wire)
		m.Fields = append(m.Fields, field)
	}
}

// fixWire maps a gogo tag wire name to ours.
func fixWire(t *Type, tagWire string) string {
	switch t.Kind {
	case "list", "map", "message", "special", "wrappedList", "string", "bytes":
		if t.Kind == "list" {
			return ""
		}
		return "bytes"
	}
	switch tagWire {
	case "varint", "zigzag32", "zigzag64", "fixed32", "fixed64":
		return tagWire
	case "", "bytes":
		return t.Wire
	}
	return tagWire
}

func main() {
	x := &extractor{messages: map[string]*Message{}, used: map[string]bool{}}
	s := Schema{Generator: "watchwire tools/refgen/cmd/schema", Modules: map[string]string{}}
	if info, ok := debug.ReadBuildInfo(); ok {
		s.Modules["go"] = info.GoVersion
		for _, d := range info.Deps {
			if strings.HasPrefix(d.Path, "k8s.io/") {
				s.Modules[d.Path] = d.Version
			}
		}
	}
	for _, k := range kinds.All() {
		x.message(k.Type)
		s.Kinds = append(s.Kinds, KindEntry{APIVersion: k.APIVersion(), Kind: k.GVK.Kind, Type: name(k.Type)})
	}
	// The decoder also needs ObjectMeta and Status on their own (metadata-only mode, ERROR events).
	for n := range x.used {
		s.Specials = append(s.Specials, n)
	}
	sort.Strings(s.Specials)
	s.Messages = x.messages
	if len(x.errs) > 0 {
		sort.Strings(x.errs)
		for _, e := range x.errs {
			fmt.Fprintln(os.Stderr, e)
		}
		os.Exit(1)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(s); err != nil {
		panic(err)
	}
}
