// Package vectorfile writes the refgen vector files: a header object, then one vector per line, so that a diff of two
// generations shows the vectors that changed.
package vectorfile

import (
	"bytes"
	"encoding/json"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
)

// Write writes `{"header": header + go, modules, count, "vectors": [...]}` to path and returns its size. modules
// lists the versions of the build's dependencies whose paths start with one of modulePrefixes.
func Write(path string, header map[string]any, modulePrefixes []string, vectors []any) (int, error) {
	full := map[string]any{"go": runtime.Version(), "modules": ModuleVersions(modulePrefixes...), "count": len(vectors)}
	for k, v := range header {
		full[k] = v
	}
	var b bytes.Buffer
	h, err := json.Marshal(full)
	if err != nil {
		return 0, err
	}
	b.WriteString("{\"header\":")
	b.Write(h)
	b.WriteString(",\n\"vectors\":[\n")
	for i, v := range vectors {
		line, err := json.Marshal(v)
		if err != nil {
			return 0, err
		}
		b.Write(line)
		if i < len(vectors)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]}\n")
	return b.Len(), os.WriteFile(path, b.Bytes(), 0o644)
}

// ModuleVersions returns path -> version of the build's dependencies whose paths start with one of the prefixes.
func ModuleVersions(prefixes ...string) map[string]string {
	versions := map[string]string{}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			for _, p := range prefixes {
				if strings.HasPrefix(dep.Path, p) {
					versions[dep.Path] = dep.Version
					break
				}
			}
		}
	}
	return versions
}
