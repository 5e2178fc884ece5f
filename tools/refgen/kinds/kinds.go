// Package kinds lists the top-level kinds watchwire decodes: every kind that client-go's scheme registers from the
// k8s.io/api packages, plus metav1.Status (the object of ERROR watch events).
package kinds

import (
	"reflect"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

// Kind is one registered kind and its Go type.
type Kind struct {
	GVK  schema.GroupVersionKind
	Type reflect.Type
}

// APIVersion is the kind's apiVersion as it appears in JSON ("v1", "apps/v1").
func (k Kind) APIVersion() string { return k.GVK.GroupVersion().String() }

// New returns a new zero object of the kind.
func (k Kind) New() runtime.Object { return reflect.New(k.Type).Interface().(runtime.Object) }

// All returns the kinds sorted by group, version, kind.
func All() []Kind {
	var out []Kind
	for gvk, t := range scheme.Scheme.AllKnownTypes() {
		if !strings.HasPrefix(t.PkgPath(), "k8s.io/api/") {
			continue
		}
		out = append(out, Kind{gvk, t})
	}
	out = append(out, Kind{schema.GroupVersionKind{Version: "v1", Kind: "Status"}, reflect.TypeOf(metav1.Status{})})
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].GVK, out[j].GVK
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.Kind < b.Kind
	})
	return out
}

// Scheme is client-go's scheme (the one the kinds come from).
var Scheme = scheme.Scheme

// Codecs is client-go's codec factory (its serializers are the API server's).
var Codecs = scheme.Codecs
