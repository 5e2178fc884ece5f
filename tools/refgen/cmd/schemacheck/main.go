// Command schemacheck cross-checks schema.json (extracted from the Go types' struct tags by cmd/schema) against the
// generated.proto files that ship with k8s.io/api and k8s.io/apimachinery: every field number, repeated-ness, map-ness
// and scalar type must agree, and no .proto field may be missing from the schema. The Go tags are known to be wrong
// in places (`rep` on a string, `opt` on a slice); cmd/schema corrects those, and this check proves the result.
//
// Usage: go run ./cmd/schemacheck schema.json $(go list -m -f '{{.Dir}}' k8s.io/api k8s.io/apimachinery)
package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

type field struct{ label, typ, name string }

var (
	pkgRe     = regexp.MustCompile(`(?m)^package ([\w.]+);`)
	commentRe = regexp.MustCompile(`//.*`)
	messageRe = regexp.MustCompile(`(?s)message (\w+) \{(.*?)\n\}`)
	fieldRe   = regexp.MustCompile(`(optional|repeated)?\s*(map<\s*\w+\s*,\s*[\w.]+\s*>|[\w.]+)\s+(\w+)\s*=\s*(\d+)`)
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: schemacheck schema.json MODULE_DIR...")
		os.Exit(2)
	}
	var schema struct {
		Messages map[string]struct {
			Fields []struct {
				Go       string `json:"go"`
				Number   int    `json:"number"`
				Repeated bool   `json:"repeated"`
				Type     struct {
					Kind string `json:"kind"`
					Elem *struct {
						Kind string `json:"kind"`
					} `json:"elem"`
				} `json:"type"`
			} `json:"fields"`
		} `json:"messages"`
	}
	data, err := os.ReadFile(os.Args[1])
	check(err)
	check(json.Unmarshal(data, &schema))
	protos := map[string]map[int]field{}
	for _, dir := range os.Args[2:] {
		check(filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() != "generated.proto" {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			text := string(b)
			pkg := pkgRe.FindStringSubmatch(text)
			if pkg == nil {
				return nil
			}
			text = commentRe.ReplaceAllString(text, "")
			for _, m := range messageRe.FindAllStringSubmatch(text, -1) {
				fields := map[int]field{}
				for _, f := range fieldRe.FindAllStringSubmatch(m[2], -1) {
					n, _ := strconv.Atoi(f[4])
					fields[n] = field{f[1], f[2], f[3]}
				}
				protos[pkg[1]+"."+m[1]] = fields
			}
			return nil
		}))
	}
	scalar := map[string]string{"string": "string", "bool": "bool", "int32": "int32", "int64": "int64", "bytes": "bytes",
		"double": "float64", "float": "float32", "uint64": "uint64", "uint32": "uint32"}
	var bad []string
	checked := 0
	for goName, m := range schema.Messages {
		dot := strings.LastIndex(goName, ".")
		protoName := strings.ReplaceAll(goName[:dot], "/", ".") + goName[dot:]
		pf, ok := protos[protoName]
		if !ok {
			bad = append(bad, "no .proto message "+protoName)
			continue
		}
		seen := map[int]bool{}
		for _, f := range m.Fields {
			if f.Number == 0 {
				continue
			}
			seen[f.Number] = true
			p, ok := pf[f.Number]
			if !ok {
				bad = append(bad, fmt.Sprintf("%s.%s: field %d not in .proto", protoName, f.Go, f.Number))
				continue
			}
			checked++
			if strings.HasPrefix(p.typ, "map<") {
				if f.Type.Kind != "map" {
					bad = append(bad, fmt.Sprintf("%s.%s: .proto has a map", protoName, p.name))
				}
				continue
			}
			if f.Repeated != (p.label == "repeated") {
				bad = append(bad, fmt.Sprintf("%s.%s: repeated %v, .proto says %q", protoName, p.name, f.Repeated, p.label))
				continue
			}
			kind := f.Type.Kind
			if f.Repeated && f.Type.Elem != nil {
				kind = f.Type.Elem.Kind
			}
			if want, isScalar := scalar[p.typ]; isScalar {
				if kind != want {
					bad = append(bad, fmt.Sprintf("%s.%s: %s, .proto says %s", protoName, p.name, kind, p.typ))
				}
			} else if kind != "message" && kind != "special" && kind != "wrappedList" {
				bad = append(bad, fmt.Sprintf("%s.%s: %s, .proto says message %s", protoName, p.name, kind, p.typ))
			}
		}
		for n, p := range pf {
			if !seen[n] {
				bad = append(bad, fmt.Sprintf("%s: .proto field %s = %d missing from the schema", protoName, p.name, n))
			}
		}
	}
	for _, b := range bad {
		fmt.Fprintln(os.Stderr, b)
	}
	fmt.Printf("schemacheck: %d messages, %d fields agree with generated.proto; %d disagreements\n", len(schema.Messages), checked, len(bad))
	if len(bad) > 0 {
		os.Exit(1)
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}
