// Command informer-bench times client-go's informers against a cluster, for bench/informer.bench.ts and
// bench/informer_run.ts: the initial sync of one resource of one namespace until HasSynced, and the heap its cache
// holds per object after a GC.
//
//	informer-bench -kubeconfig FILE -namespace NS -resource configmaps|pods -mode json|protobuf|metadata \
//	    [-warmup 1] [-rounds 5] [-memory]
//
// Modes: json and protobuf are the typed SharedInformer of the kind (k8s.io/client-go/informers) with the rest.Config's
// ContentType set to that format (client-go's default is JSON; kube-controller-manager sets protobuf); metadata is
// k8s.io/client-go/metadata/metadatainformer (PartialObjectMetadata, asked of the server in protobuf). Whether the
// reflector makes a streaming list (sendInitialEvents) or a paginated one is client-go's WatchListClient feature, on
// by default in v0.37: KUBE_FEATURE_WatchListClient=false in the environment turns it off.
//
// Each timed sync is a new informer factory over the same clients: started, then HasSynced polled every 200 µs, then
// stopped; synced means HasSynced of the informer and of the handler's registration (the handler has been given
// every object of the initial list, as watchwire's synced promise means). A no-op handler counts the adds. A GC runs
// between syncs, untimed. -memory instead makes a first sync (dropped: pools and caches warmed, as the JavaScript side
// warms its code), then a GC, then one more sync whose informer is stopped with its store kept, a GC again, and
// reports runtime.MemStats' HeapInuse and HeapAlloc before and after, per object. One JSON line on stdout.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
)

type result struct {
	Mode      string    `json:"mode"`
	Resource  string    `json:"resource"`
	WatchList bool      `json:"watchList"`
	Objects   int       `json:"objects"`
	SyncMs    []float64 `json:"syncMs,omitempty"`
	// Memory (-memory): bytes.
	HeapInuseBefore uint64  `json:"heapInuseBefore,omitempty"`
	HeapInuseAfter  uint64  `json:"heapInuseAfter,omitempty"`
	HeapAllocBefore uint64  `json:"heapAllocBefore,omitempty"`
	HeapAllocAfter  uint64  `json:"heapAllocAfter,omitempty"`
	InusePerObject  float64 `json:"inusePerObject,omitempty"`
	AllocPerObject  float64 `json:"allocPerObject,omitempty"`
	SyncMsMemory    float64 `json:"syncMsMemory,omitempty"`
	GoVersion       string  `json:"goVersion"`
}

type clients struct {
	typed    kubernetes.Interface
	metadata metadata.Interface
}

// syncOnce makes an informer of the resource, runs it until HasSynced and stops it; it returns the time to sync and
// the informer's store (still holding the objects).
func syncOnce(c clients, mode, namespace, resource string) (time.Duration, cache.Store, int64) {
	stop := make(chan struct{})
	var informer cache.SharedIndexInformer
	switch mode {
	case "metadata":
		factory := metadatainformer.NewFilteredSharedInformerFactory(c.metadata, 0, namespace, nil)
		informer = factory.ForResource(schema.GroupVersionResource{Version: "v1", Resource: resource}).Informer()
	default:
		factory := informers.NewSharedInformerFactoryWithOptions(c.typed, 0, informers.WithNamespace(namespace))
		switch resource {
		case "configmaps":
			informer = factory.Core().V1().ConfigMaps().Informer()
		case "pods":
			informer = factory.Core().V1().Pods().Informer()
		default:
			fail("unknown resource %q", resource)
		}
	}
	var adds atomic.Int64
	registration, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { adds.Add(1) },
		UpdateFunc: func(any, any) {},
		DeleteFunc: func(any) {},
	})
	if err != nil {
		fail("AddEventHandler: %v", err)
	}
	started := time.Now()
	go informer.Run(stop)
	deadline := started.Add(5 * time.Minute)
	// Synced as a controller waits for it: the store filled and the handler given every object of the initial list.
	for !informer.HasSynced() || !registration.HasSynced() {
		if time.Now().After(deadline) {
			fail("not synced after 5 minutes")
		}
		time.Sleep(200 * time.Microsecond)
	}
	took := time.Since(started)
	close(stop)
	return took, informer.GetStore(), adds.Load()
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "informer-bench: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig file")
	namespace := flag.String("namespace", "bench", "namespace")
	resource := flag.String("resource", "configmaps", "configmaps or pods")
	mode := flag.String("mode", "protobuf", "json, protobuf or metadata")
	warmup := flag.Int("warmup", 1, "untimed syncs first")
	rounds := flag.Int("rounds", 5, "timed syncs")
	memory := flag.Bool("memory", false, "one sync, then the heap per cached object")
	flag.Parse()
	// The stopped informers' watches end with "context canceled": not news here.
	klog.SetLogger(logr.Discard())

	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fail("kubeconfig: %v", err)
	}
	config.QPS = -1 // no client-side rate limit
	switch *mode {
	case "json":
		config.ContentType = "application/json"
		config.AcceptContentTypes = "application/json"
	case "protobuf", "metadata":
		// As kube-controller-manager's clients: protobuf for built-in kinds, JSON for the rest.
		config.ContentType = "application/vnd.kubernetes.protobuf"
		config.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	default:
		fail("unknown mode %q", *mode)
	}
	var c clients
	if c.typed, err = kubernetes.NewForConfig(config); err != nil {
		fail("clientset: %v", err)
	}
	if c.metadata, err = metadata.NewForConfig(config); err != nil {
		fail("metadata client: %v", err)
	}
	// One request before anything is measured, so the connection (TLS) is made and reused by every sync.
	if _, err := c.typed.Discovery().ServerVersion(); err != nil {
		fail("server version: %v", err)
	}

	out := result{
		Mode:      *mode,
		Resource:  *resource,
		WatchList: clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient),
		GoVersion: runtime.Version(),
	}
	if *memory {
		var before, after runtime.MemStats
		// A first sync, dropped, as the JavaScript side makes one to compile its code: pools and caches warmed.
		syncOnce(c, *mode, *namespace, *resource)
		time.Sleep(500 * time.Millisecond)
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&before)
		took, store, adds := syncOnce(c, *mode, *namespace, *resource)
		// Let the stopped informer's goroutines (reflector, watch) end and drop their buffers.
		time.Sleep(500 * time.Millisecond)
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&after)
		n := len(store.ListKeys())
		if int64(n) != adds {
			fail("store holds %d objects, handler saw %d adds", n, adds)
		}
		runtime.KeepAlive(store)
		out.Objects = n
		out.SyncMsMemory = float64(took.Microseconds()) / 1e3
		out.HeapInuseBefore, out.HeapInuseAfter = before.HeapInuse, after.HeapInuse
		out.HeapAllocBefore, out.HeapAllocAfter = before.HeapAlloc, after.HeapAlloc
		out.InusePerObject = (float64(after.HeapInuse) - float64(before.HeapInuse)) / float64(n)
		out.AllocPerObject = (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / float64(n)
	} else {
		for i := 0; i < *warmup+*rounds; i++ {
			took, store, adds := syncOnce(c, *mode, *namespace, *resource)
			n := len(store.ListKeys())
			if int64(n) != adds {
				fail("store holds %d objects, handler saw %d adds", n, adds)
			}
			out.Objects = n
			if i >= *warmup {
				out.SyncMs = append(out.SyncMs, float64(took.Microseconds())/1e3)
			}
			runtime.GC() // each sync starts with the garbage of the one before collected
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fail("%v", err)
	}
}
