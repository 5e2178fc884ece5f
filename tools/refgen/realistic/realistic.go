// Package realistic makes one "realistic" object of every kind for the reference fixtures: a hand-written object
// like a real cluster has for the common kinds (Handwritten), and for every other kind a plausible object made by
// a deterministic filler (Fill). Both are pure functions of the kind: the same bytes on every run.
package realistic

import (
	"fmt"
	"hash/fnv"
	"reflect"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/watchwire/watchwire/tools/refgen/kinds"
)

// Epoch is the fixtures' reference time: every timestamp of the realistic objects lies shortly before it.
var Epoch = time.Date(2026, time.November, 20, 9, 30, 0, 0, time.UTC)

// Seed is the fixed seed of a kind for a purpose ("realistic", "fuzz"): FNV-1a of "purpose:apiVersion/Kind".
func Seed(purpose string, k kinds.Kind) int64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s:%s/%s", purpose, k.APIVersion(), k.GVK.Kind)
	return int64(h.Sum64() & (1<<63 - 1))
}

// uuidFrom formats 128 bits as an RFC 4122 version 4 UUID string.
func uuidFrom(hi, lo uint64) string {
	hi = hi&^0xf000 | 0x4000
	lo = lo&^(0xc<<60) | 0x8<<60
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", hi>>32, hi>>16&0xffff, hi&0xffff, lo>>48, lo&0xffffffffffff)
}

// uidOf is a stable UID for a named thing of the hand-written objects.
func uidOf(s string) types.UID {
	h := fnv.New128a()
	h.Write([]byte(s))
	b := h.Sum(nil)
	var hi, lo uint64
	for i := 0; i < 8; i++ {
		hi = hi<<8 | uint64(b[i])
		lo = lo<<8 | uint64(b[8+i])
	}
	return types.UID(uuidFrom(hi, lo))
}

// clusterScoped lists the kinds (without "List") that the API server serves without a namespace.
var clusterScoped = map[string]bool{
	"Node": true, "Namespace": true, "PersistentVolume": true, "ComponentStatus": true, "ClusterRole": true,
	"ClusterRoleBinding": true, "StorageClass": true, "CSIDriver": true, "CSINode": true, "VolumeAttachment": true,
	"VolumeAttributesClass": true, "MutatingWebhookConfiguration": true, "ValidatingWebhookConfiguration": true,
	"ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true, "MutatingAdmissionPolicy": true,
	"MutatingAdmissionPolicyBinding": true, "PriorityClass": true, "RuntimeClass": true, "IngressClass": true,
	"IPAddress": true, "ServiceCIDR": true, "CertificateSigningRequest": true, "ClusterTrustBundle": true,
	"FlowSchema": true, "PriorityLevelConfiguration": true, "StorageVersion": true, "StorageVersionMigration": true,
	"DeviceClass": true, "ResourceSlice": true, "DeviceTaintRule": true, "TokenReview": true,
	"SelfSubjectReview": true, "SelfSubjectAccessReview": true, "SelfSubjectRulesReview": true,
	"SubjectAccessReview": true, "RangeAllocation": true, "ResourcePoolStatusRequest": true,
}

// Namespaced reports whether objects of the kind live in a namespace.
func Namespaced(k kinds.Kind) bool { return !clusterScoped[strings.TrimSuffix(k.GVK.Kind, "List")] }

// handwritten maps "apiVersion/Kind" to the function that writes its realistic object.
var handwritten = map[string]func() runtime.Object{}

func register(apiVersion, kind string, fn func() runtime.Object) {
	handwritten[apiVersion+"/"+kind] = fn
}

// Handwritten lists the kinds ("apiVersion/Kind") whose realistic object is written by hand, sorted.
func Handwritten() []string {
	out := make([]string, 0, len(handwritten))
	for k := range handwritten {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Source says where a kind's realistic object comes from: "handwritten", "handwritten items" (a List of the
// hand-written object) or "filler".
func Source(k kinds.Kind) string {
	if _, ok := handwritten[k.APIVersion()+"/"+k.GVK.Kind]; ok {
		return "handwritten"
	}
	if item, ok := listItemKind(k); ok {
		if _, ok := handwritten[item.APIVersion()+"/"+item.GVK.Kind]; ok {
			return "handwritten items"
		}
	}
	return "filler"
}

// Object returns the realistic object of the kind. apiVersion and kind stay empty (the encoders set them).
func Object(k kinds.Kind) runtime.Object {
	if fn, ok := handwritten[k.APIVersion()+"/"+k.GVK.Kind]; ok {
		return fn()
	}
	if item, ok := listItemKind(k); ok {
		// A List: its ListMeta and items (the hand-written object or filled ones).
		list := k.New()
		v := reflect.ValueOf(list).Elem()
		f := &filler{r: newRand(Seed("realistic", k)), kind: k}
		v.FieldByName("ListMeta").Set(reflect.ValueOf(metav1.ListMeta{ResourceVersion: f.resourceVersion()}))
		items := v.FieldByName("Items")
		var objs []runtime.Object
		if fn, ok := handwritten[item.APIVersion()+"/"+item.GVK.Kind]; ok {
			objs = []runtime.Object{fn()}
		} else {
			for i := 0; i < 2; i++ {
				objs = append(objs, Fill(item, Seed(fmt.Sprintf("realistic-item-%d", i), k)))
			}
		}
		s := reflect.MakeSlice(items.Type(), len(objs), len(objs))
		for i, o := range objs {
			s.Index(i).Set(reflect.ValueOf(o).Elem())
		}
		items.Set(s)
		return list
	}
	return Fill(k, Seed("realistic", k))
}

// listItemKind is the kind of a List kind's items, when the items are objects of a kind in the same group version.
func listItemKind(k kinds.Kind) (kinds.Kind, bool) {
	if !strings.HasSuffix(k.GVK.Kind, "List") {
		return kinds.Kind{}, false
	}
	items, ok := k.Type.FieldByName("Items")
	if !ok || items.Type.Kind() != reflect.Slice {
		return kinds.Kind{}, false
	}
	gvk := k.GVK
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	t, ok := kinds.Scheme.AllKnownTypes()[gvk]
	if !ok || t != items.Type.Elem() {
		return kinds.Kind{}, false
	}
	return kinds.Kind{GVK: gvk, Type: t}, true
}
