package realistic

import (
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/watchwire/watchwire/tools/refgen/kinds"
)

// The plausible filler: for the kinds without a hand-written object, a deterministic walk of the Go type that
// puts values like a cluster's into the fields (DNS-label names, second-precision timestamps, small counts,
// canonical quantities, known enum values), leaving most optional fields unset.

const (
	// Pointers, slices and maps stay unset this often: less near the top (so that spec and status have content),
	// more below.
	nilChanceTop  = 0.3
	nilChanceDeep = 0.6
	topDepth      = 2
	maxDepth      = 12 // struct nesting below which everything stays unset
)

type filler struct {
	r    *rand.Rand
	kind kinds.Kind
	name string // the object's name, reused for selectors and references
	// metaDone is set once the top-level ObjectMeta is filled; later ones (templates) get labels only.
	metaDone bool
}

// Fill returns a plausible object of the kind, the same for the same seed.
func Fill(k kinds.Kind, seed int64) runtime.Object {
	f := &filler{r: newRand(seed), kind: k}
	f.name = f.dnsName()
	obj := k.New()
	f.fillStruct(reflect.ValueOf(obj).Elem(), 0)
	return obj
}

func newRand(seed int64) *rand.Rand { return rand.New(rand.NewSource(seed)) }

var (
	typeTypeMeta     = reflect.TypeOf(metav1.TypeMeta{})
	typeObjectMeta   = reflect.TypeOf(metav1.ObjectMeta{})
	typeListMeta     = reflect.TypeOf(metav1.ListMeta{})
	typeTime         = reflect.TypeOf(metav1.Time{})
	typeMicroTime    = reflect.TypeOf(metav1.MicroTime{})
	typeDuration     = reflect.TypeOf(metav1.Duration{})
	typeQuantity     = reflect.TypeOf(resource.Quantity{})
	typeIntOrString  = reflect.TypeOf(intstr.IntOrString{})
	typeRawExtension = reflect.TypeOf(runtime.RawExtension{})
	typeFieldsV1     = reflect.TypeOf(metav1.FieldsV1{})
	typeSelector     = reflect.TypeOf(metav1.LabelSelector{})
	typeCondition    = reflect.TypeOf(metav1.Condition{})
	typeUID          = reflect.TypeOf(types.UID(""))
)

func (f *filler) chance(p float64) bool { return f.r.Float64() < p }

// unset decides whether an optional value at depth stays unset.
func (f *filler) unset(depth int) bool {
	if depth <= topDepth {
		return f.chance(nilChanceTop)
	}
	return f.chance(nilChanceDeep)
}
func (f *filler) pick(s ...string) string { return s[f.r.Intn(len(s))] }
func (f *filler) count() int              { return 1 + f.r.Intn(2) }

// fill sets v (settable) from its type and the JSON name of the field that holds it.
func (f *filler) fill(v reflect.Value, hint string, depth int) {
	if depth > maxDepth {
		return
	}
	switch v.Type() {
	case typeTypeMeta:
		return // the encoder sets apiVersion and kind
	case typeObjectMeta:
		v.Set(reflect.ValueOf(f.objectMeta()))
		return
	case typeListMeta:
		v.Set(reflect.ValueOf(metav1.ListMeta{ResourceVersion: f.resourceVersion()}))
		return
	case typeTime:
		v.Set(reflect.ValueOf(f.time()))
		return
	case typeMicroTime:
		t := f.time().Add(time.Duration(f.r.Intn(1000000)) * time.Microsecond)
		v.Set(reflect.ValueOf(metav1.NewMicroTime(t)))
		return
	case typeDuration:
		v.Set(reflect.ValueOf(metav1.Duration{Duration: []time.Duration{30 * time.Second, 5 * time.Minute, time.Hour, 90 * time.Second}[f.r.Intn(4)]}))
		return
	case typeQuantity:
		v.Set(reflect.ValueOf(f.quantity(hint)))
		return
	case typeIntOrString:
		if f.chance(0.5) {
			v.Set(reflect.ValueOf(intstr.FromInt32(f.port())))
		} else if strings.Contains(strings.ToLower(hint), "port") {
			v.Set(reflect.ValueOf(intstr.FromString(f.pick("http", "https", "metrics", "grpc"))))
		} else {
			v.Set(reflect.ValueOf(intstr.FromString(f.pick("25%", "1", "10%", "50%"))))
		}
		return
	case typeRawExtension:
		v.Set(reflect.ValueOf(runtime.RawExtension{Raw: []byte(fmt.Sprintf(
			`{"apiVersion":"example.com/v1","kind":"Parameters","metadata":{"name":%q},"spec":{"replicas":%d,"tier":%q}}`,
			f.dnsName(), 1+f.r.Intn(5), f.pick("gold", "silver", "bronze")))}))
		return
	case typeFieldsV1:
		v.Set(reflect.ValueOf(metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{".":{},"f:app":{}}}}`)}))
		return
	case typeSelector:
		v.Set(reflect.ValueOf(metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": f.name}}))
		return
	case typeCondition:
		v.Set(reflect.ValueOf(metav1.Condition{
			Type: f.pick("Ready", "Available", "Progressing", "Established"), Status: metav1.ConditionTrue,
			ObservedGeneration: int64(1 + f.r.Intn(4)), LastTransitionTime: f.time(),
			Reason: f.pick("AsExpected", "ReconcileSucceeded", "MinimumReplicasAvailable"), Message: f.message(),
		}))
		return
	case typeUID:
		v.SetString(f.uid())
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		f.fillStruct(v, depth+1)
	case reflect.Pointer:
		if f.unset(depth) {
			return
		}
		p := reflect.New(v.Type().Elem())
		f.fill(p.Elem(), hint, depth+1)
		v.Set(p)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			if f.unset(depth) {
				return
			}
			v.SetBytes(f.bytes(hint))
			return
		}
		if f.unset(depth) {
			return
		}
		n := f.count()
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := 0; i < n; i++ {
			f.fill(s.Index(i), singular(hint), depth+1)
		}
		v.Set(s)
	case reflect.Map:
		if f.unset(depth) {
			return
		}
		m := reflect.MakeMap(v.Type())
		n := f.count()
		for i := 0; i < n; i++ {
			key := reflect.New(v.Type().Key()).Elem()
			f.mapKey(key, hint, i)
			val := reflect.New(v.Type().Elem()).Elem()
			if val.Kind() == reflect.String {
				f.mapValue(val, hint, key.String())
			} else {
				f.fill(val, key.String(), depth+1)
			}
			m.SetMapIndex(key, val)
		}
		v.Set(m)
	case reflect.String:
		if v.Type().Name() != "string" && v.Type().PkgPath() != "" {
			if s, ok := f.enum(v.Type()); ok {
				v.SetString(s)
				return
			}
		}
		v.SetString(f.str(hint))
	case reflect.Bool:
		v.SetBool(f.chance(0.5))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(f.number(hint))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(f.number(hint)))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(f.r.Intn(100)) / 4)
	case reflect.Interface:
		// no top-level kind of k8s.io/api has one; leave nil
	default:
		panic(fmt.Sprintf("filler: cannot fill %s", v.Type()))
	}
}

func (f *filler) fillStruct(v reflect.Value, depth int) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		f.fill(v.Field(i), name, depth)
	}
}

func singular(hint string) string {
	switch {
	case strings.HasSuffix(hint, "ies"):
		return strings.TrimSuffix(hint, "ies") + "y"
	case strings.HasSuffix(hint, "sses"):
		return strings.TrimSuffix(hint, "es")
	case strings.HasSuffix(hint, "s") && !strings.HasSuffix(hint, "ss"):
		return strings.TrimSuffix(hint, "s")
	}
	return hint
}

var words = []string{
	"web", "api", "frontend", "backend", "payments", "checkout", "cache", "redis", "postgres", "worker",
	"ingest", "metrics", "logging", "auth", "gateway", "search", "billing", "catalog", "orders", "notifier",
}

func (f *filler) dnsName() string {
	if f.chance(0.5) {
		return f.pick(words...) + "-" + f.pick(words...)
	}
	return f.pick(words...) + "-" + f.pick("0", "1", "2", "7d4b9", "x2k9p", "main", "canary")
}

func (f *filler) camel() string {
	return f.pick("Ready", "Available", "Succeeded", "Pending", "Active", "Healthy", "Degraded", "Synced",
		"Progressing", "Complete", "Default", "Enabled")
}

func (f *filler) message() string {
	return f.pick(
		"all replicas are ready",
		"waiting for the first reconcile",
		`pod "web-7d4b9c8f6d-x2k9p" is not ready: containers with unready status: [web]`,
		"the object has been modified; please apply your changes to the latest version and try again",
		"successfully synced",
	)
}

func (f *filler) ip() string {
	return fmt.Sprintf("10.%d.%d.%d", 96+f.r.Intn(160), f.r.Intn(256), 1+f.r.Intn(254))
}

func (f *filler) uid() string { return uuidFrom(f.r.Uint64(), f.r.Uint64()) }

func (f *filler) resourceVersion() string { return fmt.Sprint(100000 + f.r.Intn(9000000)) }

// time is a second-precision UTC time in the week before the fixtures' reference date.
func (f *filler) time() metav1.Time {
	return metav1.NewTime(Epoch.Add(-time.Duration(f.r.Intn(7*24*3600)) * time.Second))
}

func (f *filler) port() int32 {
	return []int32{80, 443, 8080, 8443, 9090, 5432, 6379, 10250}[f.r.Intn(8)]
}

func (f *filler) quantity(hint string) resource.Quantity {
	h := strings.ToLower(hint)
	switch {
	case strings.Contains(h, "cpu"):
		return resource.MustParse(f.pick("100m", "250m", "500m", "1", "2"))
	case strings.Contains(h, "memory") || strings.Contains(h, "storage") || strings.Contains(h, "size") || strings.Contains(h, "capacity"):
		return resource.MustParse(f.pick("128Mi", "256Mi", "512Mi", "1Gi", "10Gi"))
	case strings.Contains(h, "pods") || strings.Contains(h, "count"):
		return resource.MustParse(f.pick("10", "110", "3"))
	}
	return resource.MustParse(f.pick("100m", "1", "128Mi", "1Gi", "4"))
}

func (f *filler) number(hint string) int64 {
	h := strings.ToLower(hint)
	switch {
	case strings.Contains(h, "port"):
		return int64(f.port())
	case strings.Contains(h, "replicas") || strings.Contains(h, "number") || strings.Contains(h, "count") ||
		strings.Contains(h, "scheduled") || strings.Contains(h, "parallelism") || strings.Contains(h, "completions"):
		return int64(f.r.Intn(5))
	case strings.Contains(h, "seconds"):
		return []int64{5, 10, 30, 60, 300, 3600}[f.r.Intn(6)]
	case strings.Contains(h, "generation"):
		return int64(1 + f.r.Intn(6))
	case strings.Contains(h, "priority") || strings.Contains(h, "value"):
		return []int64{0, 100, 1000, 1000000}[f.r.Intn(4)]
	case strings.Contains(h, "weight") || strings.Contains(h, "percent"):
		return int64(10 * (1 + f.r.Intn(10)))
	case strings.Contains(h, "bytes"):
		return int64(1024 * (1 + f.r.Intn(1<<20)))
	case strings.Contains(h, "exitcode") || strings.Contains(h, "uid") || strings.Contains(h, "gid") || strings.Contains(h, "user") || strings.Contains(h, "group"):
		return []int64{0, 1000, 65532}[f.r.Intn(3)]
	}
	return int64(1 + f.r.Intn(5))
}

func (f *filler) bytes(hint string) []byte {
	h := strings.ToLower(hint)
	if strings.Contains(h, "ca") || strings.Contains(h, "cert") || strings.Contains(h, "request") || strings.Contains(h, "bundle") {
		return []byte("-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ2FQZW1vLWNlcnQtZm9yLXdhdGNod2lyZTAKBggqhkjO\nPQQDAjAVMRMwEQYDVQQDEwprdWJlcm5ldGVzMB4XDTI2MTEyMDA4MDAwMFoXDTM2\n-----END CERTIFICATE-----\n")
	}
	return []byte(f.pick("s3cr3t-value", "\x00\x01\x02binary\xff\xfe", "token-2f9a71c0"))
}

func (f *filler) labelKey() string {
	return f.pick("app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/component",
		"app.kubernetes.io/part-of", "app", "tier", "team", "environment")
}

func (f *filler) mapKey(key reflect.Value, hint string, i int) {
	h := strings.ToLower(hint)
	var s string
	switch {
	case key.Type().Name() == "ResourceName" || strings.Contains(h, "capacity") || strings.Contains(h, "allocatable") ||
		strings.Contains(h, "request") || strings.Contains(h, "limit") || strings.Contains(h, "hard") || strings.Contains(h, "used"):
		s = []string{"cpu", "memory", "ephemeral-storage", "pods"}[i%4]
	case strings.Contains(h, "annotation"):
		s = []string{"kubernetes.io/description", "example.com/owner", "prometheus.io/scrape"}[i%3]
	case strings.Contains(h, "label") || strings.Contains(h, "selector"):
		s = []string{"app.kubernetes.io/name", "app.kubernetes.io/instance", "tier"}[i%3]
	case strings.Contains(h, "data"):
		s = []string{"config.yaml", "ca.crt", "token"}[i%3]
	default:
		s = []string{"example.com/key", "mode", "zone", "driver.example.com/setting"}[i%4]
	}
	key.SetString(s)
}

func (f *filler) mapValue(v reflect.Value, hint, key string) {
	h := strings.ToLower(hint)
	switch {
	case strings.Contains(h, "label") || strings.Contains(h, "selector"):
		v.SetString(f.name)
	case key == "prometheus.io/scrape":
		v.SetString("true")
	case strings.Contains(h, "data"):
		v.SetString("# generated\nlogLevel: info\nreplicas: 3\n")
	default:
		v.SetString(f.str(key))
	}
}

// str is a value for a plain string field, chosen from the field's JSON name.
func (f *filler) str(hint string) string {
	h := strings.ToLower(hint)
	switch {
	case h == "namespace":
		return f.pick("default", "kube-system", "payments", "monitoring")
	case h == "uid":
		return f.uid()
	case h == "resourceversion":
		return f.resourceVersion()
	case h == "apiversion":
		return f.pick("v1", "apps/v1", "example.com/v1")
	case h == "kind":
		return f.pick("Pod", "ConfigMap", "Deployment", "Service")
	case h == "image" || strings.HasSuffix(h, "image"):
		return f.pick("registry.k8s.io/pause:3.10", "ghcr.io/example/web:1.4.2", "docker.io/library/nginx:1.27.3")
	case strings.Contains(h, "nodename") || h == "hostname" || h == "node":
		return f.pick("worker-1", "worker-2", "control-plane-1")
	case strings.Contains(h, "cidr"):
		return f.pick("10.96.0.0/12", "10.244.0.0/24", "fd00:10:96::/112")
	case h == "ip" || strings.HasSuffix(h, "ip") || strings.HasSuffix(h, "ips") || h == "address":
		return f.ip()
	case strings.Contains(h, "path"):
		return f.pick("/healthz", "/var/lib/data", "/etc/config", "/metrics")
	case h == "host" || strings.HasSuffix(h, "host") || strings.Contains(h, "domain"):
		return f.pick("example.com", "api.example.com", "web.payments.svc.cluster.local")
	case strings.Contains(h, "url") || strings.Contains(h, "uri"):
		return f.pick("https://hooks.example.com/validate", "https://auth.example.com")
	case h == "message" || strings.HasSuffix(h, "message") || h == "note" || h == "description":
		return f.message()
	case h == "reason" || strings.HasSuffix(h, "reason"):
		return f.pick("MinimumReplicasAvailable", "NewReplicaSetAvailable", "Scheduled", "Pulled", "AsExpected")
	case h == "type" || h == "status" || h == "phase" || h == "condition" || h == "state":
		return f.camel()
	case h == "key" || strings.HasSuffix(h, "key"):
		return f.labelKey()
	case h == "operator":
		return f.pick("In", "Exists", "Equal")
	case h == "protocol":
		return f.pick("TCP", "UDP")
	case strings.Contains(h, "version"):
		return f.pick("v1", "v1.35.0", "1.4.2")
	case h == "group" || strings.HasSuffix(h, "group") || h == "apigroup" || strings.HasSuffix(h, "apigroups"):
		return f.pick("", "apps", "batch", "example.com")
	case h == "resource" || strings.HasSuffix(h, "resource") || h == "resources":
		return f.pick("pods", "deployments", "configmaps", "secrets")
	case h == "verb" || h == "verbs":
		return f.pick("get", "list", "watch", "create", "update", "patch", "delete")
	case strings.Contains(h, "expression") || h == "validation":
		return f.pick("object.spec.replicas <= 5", "has(object.metadata.labels)", "request.userInfo.username != ''")
	case h == "command" || h == "arg" || h == "args":
		return f.pick("/bin/sh", "-c", "--v=2", "--config=/etc/config/config.yaml")
	case h == "user" || strings.Contains(h, "username"):
		return f.pick("system:serviceaccount:default:builder", "alice@example.com", "system:kube-scheduler")
	case h == "driver" || strings.HasSuffix(h, "driver") || strings.HasSuffix(h, "drivername"):
		return f.pick("ebs.csi.aws.com", "csi.example.com", "gpu.example.com")
	case h == "fstype":
		return "ext4"
	case strings.Contains(h, "zone"):
		return f.pick("us-east-1a", "us-east-1b", "europe-west4-c")
	case h == "signername":
		return "kubernetes.io/kube-apiserver-client"
	case strings.HasSuffix(h, "name") || strings.HasSuffix(h, "names") || h == "finalizer":
		return f.dnsName()
	case h == "value" || strings.HasSuffix(h, "value"):
		return f.pick("true", "info", "3", "linux", f.name)
	}
	return f.dnsName()
}

// enums holds values the API defines for named string types; a type not listed gets a plausible word.
var enums = map[string][]string{
	"ConditionStatus":                          {"True", "True", "False", "Unknown"},
	"Protocol":                                 {"TCP", "TCP", "UDP", "SCTP"},
	"PullPolicy":                               {"IfNotPresent", "Always", "Never"},
	"RestartPolicy":                            {"Always", "OnFailure", "Never"},
	"ContainerRestartPolicy":                   {"Always"},
	"DNSPolicy":                                {"ClusterFirst", "Default", "ClusterFirstWithHostNet"},
	"ServiceType":                              {"ClusterIP", "NodePort", "LoadBalancer"},
	"ServiceAffinity":                          {"None", "ClientIP"},
	"ServiceInternalTrafficPolicy":             {"Cluster", "Local"},
	"ServiceExternalTrafficPolicy":             {"Cluster", "Local"},
	"IPFamily":                                 {"IPv4", "IPv6"},
	"IPFamilyPolicy":                           {"SingleStack", "PreferDualStack", "RequireDualStack"},
	"PodPhase":                                 {"Running", "Pending", "Succeeded"},
	"NamespacePhase":                           {"Active", "Terminating"},
	"NodePhase":                                {"Running"},
	"PersistentVolumePhase":                    {"Bound", "Available", "Released"},
	"PersistentVolumeClaimPhase":               {"Bound", "Pending"},
	"PersistentVolumeAccessMode":               {"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"},
	"PersistentVolumeReclaimPolicy":            {"Delete", "Retain"},
	"PersistentVolumeMode":                     {"Filesystem", "Block"},
	"ResourceName":                             {"cpu", "memory", "ephemeral-storage", "pods"},
	"TaintEffect":                              {"NoSchedule", "PreferNoSchedule", "NoExecute"},
	"TolerationOperator":                       {"Exists", "Equal"},
	"NodeSelectorOperator":                     {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"},
	"LabelSelectorOperator":                    {"In", "NotIn", "Exists", "DoesNotExist"},
	"ScopeSelectorOperator":                    {"In", "NotIn", "Exists", "DoesNotExist"},
	"NodeConditionType":                        {"Ready", "MemoryPressure", "DiskPressure", "PIDPressure"},
	"PodConditionType":                         {"Ready", "PodScheduled", "Initialized", "ContainersReady"},
	"NodeAddressType":                          {"InternalIP", "Hostname", "ExternalIP"},
	"MountPropagationMode":                     {"None", "HostToContainer", "Bidirectional"},
	"TerminationMessagePolicy":                 {"File", "FallbackToLogsOnError"},
	"URIScheme":                                {"HTTP", "HTTPS"},
	"PreemptionPolicy":                         {"PreemptLowerPriority", "Never"},
	"PodQOSClass":                              {"Burstable", "BestEffort", "Guaranteed"},
	"Capability":                               {"NET_ADMIN", "NET_BIND_SERVICE", "ALL"},
	"ProcMountType":                            {"Default", "Unmasked"},
	"SeccompProfileType":                       {"RuntimeDefault", "Unconfined", "Localhost"},
	"AppArmorProfileType":                      {"RuntimeDefault", "Unconfined", "Localhost"},
	"StorageMedium":                            {"", "Memory"},
	"HostPathType":                             {"", "DirectoryOrCreate", "Directory", "File", "Socket"},
	"SecretType":                               {"Opaque", "kubernetes.io/tls", "kubernetes.io/dockerconfigjson", "kubernetes.io/service-account-token"},
	"FinalizerName":                            {"kubernetes"},
	"OSName":                                   {"linux", "windows"},
	"LimitType":                                {"Container", "Pod", "PersistentVolumeClaim"},
	"ResourceQuotaScope":                       {"Terminating", "NotTerminating", "BestEffort", "NotBestEffort", "PriorityClass"},
	"DeploymentStrategyType":                   {"RollingUpdate", "Recreate"},
	"DeploymentConditionType":                  {"Available", "Progressing", "ReplicaFailure"},
	"StatefulSetUpdateStrategyType":            {"RollingUpdate", "OnDelete"},
	"DaemonSetUpdateStrategyType":              {"RollingUpdate", "OnDelete"},
	"PodManagementPolicyType":                  {"OrderedReady", "Parallel"},
	"ConcurrencyPolicy":                        {"Allow", "Forbid", "Replace"},
	"CompletionMode":                           {"NonIndexed", "Indexed"},
	"JobConditionType":                         {"Complete", "Failed", "SuccessCriteriaMet", "Suspended"},
	"PodReplacementPolicy":                     {"TerminatingOrFailed", "Failed"},
	"PodFailurePolicyAction":                   {"FailJob", "Ignore", "Count", "FailIndex"},
	"PodFailurePolicyOnExitCodesOperator":      {"In", "NotIn"},
	"FailurePolicyType":                        {"Fail", "Ignore"},
	"MatchPolicyType":                          {"Equivalent", "Exact"},
	"SideEffectClass":                          {"None", "NoneOnDryRun"},
	"ReinvocationPolicyType":                   {"Never", "IfNeeded"},
	"OperationType":                            {"CREATE", "UPDATE", "DELETE", "*"},
	"ScopeType":                                {"*", "Cluster", "Namespaced"},
	"ValidationAction":                         {"Deny", "Warn", "Audit"},
	"PolicyType":                               {"Ingress", "Egress"},
	"PathType":                                 {"Prefix", "Exact", "ImplementationSpecific"},
	"AddressType":                              {"IPv4", "IPv6", "FQDN"},
	"KeyUsage":                                 {"digital signature", "key encipherment", "client auth", "server auth"},
	"RequestConditionType":                     {"Approved", "Denied", "Failed"},
	"MetricSourceType":                         {"Resource", "Pods", "Object", "External", "ContainerResource"},
	"MetricTargetType":                         {"Utilization", "Value", "AverageValue"},
	"HPAScalingPolicyType":                     {"Pods", "Percent"},
	"ScalingPolicySelect":                      {"Max", "Min", "Disabled"},
	"UnhealthyPodEvictionPolicyType":           {"IfHealthyBudget", "AlwaysAllow"},
	"VolumeBindingMode":                        {"WaitForFirstConsumer", "Immediate"},
	"VolumeLifecycleMode":                      {"Persistent", "Ephemeral"},
	"FSGroupPolicy":                            {"File", "ReadWriteOnceWithFSType", "None"},
	"SubjectKind":                              {"User", "Group", "ServiceAccount"},
	"LimitResponseType":                        {"Queue", "Reject"},
	"PriorityLevelEnablement":                  {"Limited", "Exempt"},
	"FlowDistinguisherMethodType":              {"ByUser", "ByNamespace"},
	"DeviceAllocationMode":                     {"ExactCount", "All"},
	"DeviceTolerationOperator":                 {"Exists", "Equal"},
	"DeviceTaintEffect":                        {"NoSchedule", "NoExecute"},
	"PodFSGroupChangePolicy":                   {"OnRootMismatch", "Always"},
	"PodSELinuxChangePolicy":                   {"Recursive", "MountOption"},
	"SupplementalGroupsPolicy":                 {"Merge", "Strict"},
	"ResourceResizeRestartPolicy":              {"NotRequired", "RestartContainer"},
	"RecursiveReadOnlyMode":                    {"Disabled", "IfPossible", "Enabled"},
	"GRPCProbeMode":                            {"Default"},
	"Signal":                                   {"SIGTERM", "SIGKILL", "SIGINT"},
	"LoadBalancerIPMode":                       {"VIP", "Proxy"},
	"PersistentVolumeClaimRetentionPolicyType": {"Retain", "Delete"},
	"UnsatisfiableConstraintAction":            {"DoNotSchedule", "ScheduleAnyway"},
	"NodeInclusionPolicy":                      {"Honor", "Ignore"},
	"AzureDataDiskKind":                        {"Managed", "Shared", "Dedicated"},
	"AzureDataDiskCachingMode":                 {"ReadOnly", "ReadWrite", "None"},
	"Operation":                                {"CREATE", "UPDATE", "DELETE", "CONNECT"},
	"PatchType":                                {"ApplyYAML", "JSONPatch"},
	"HTTPProtocol":                             {"HTTP"},
}

func (f *filler) enum(t reflect.Type) (string, bool) {
	if vals, ok := enums[t.Name()]; ok {
		return vals[f.r.Intn(len(vals))], true
	}
	n := t.Name()
	if strings.HasSuffix(n, "Type") || strings.HasSuffix(n, "Policy") || strings.HasSuffix(n, "Phase") ||
		strings.HasSuffix(n, "Mode") || strings.HasSuffix(n, "Status") || strings.HasSuffix(n, "Action") {
		return f.camel(), true
	}
	return "", false
}

// objectMeta is the metadata of the object being filled: the full set a stored object has at the top level, the
// labels of a template below it.
func (f *filler) objectMeta() metav1.ObjectMeta {
	if f.metaDone {
		return metav1.ObjectMeta{Labels: map[string]string{"app.kubernetes.io/name": f.name}}
	}
	f.metaDone = true
	ns := ""
	if Namespaced(f.kind) {
		ns = f.pick("default", "payments", "monitoring", "kube-system")
	}
	created := f.time()
	m := metav1.ObjectMeta{
		Name:              f.name,
		Namespace:         ns,
		UID:               types.UID(f.uid()),
		ResourceVersion:   f.resourceVersion(),
		Generation:        int64(1 + f.r.Intn(4)),
		CreationTimestamp: created,
		Labels: map[string]string{
			"app.kubernetes.io/name":       f.name,
			"app.kubernetes.io/managed-by": f.pick("Helm", "kustomize", "argocd"),
		},
		ManagedFields: []metav1.ManagedFieldsEntry{{
			Manager: f.pick("helm", "kubectl-client-side-apply", "argocd-controller"), Operation: metav1.ManagedFieldsOperationUpdate,
			APIVersion: f.kind.APIVersion(), Time: &created, FieldsType: "FieldsV1",
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{".":{},"f:app.kubernetes.io/managed-by":{},"f:app.kubernetes.io/name":{}}}}`)},
		}},
	}
	if ns != "" && f.chance(0.5) {
		m.Annotations = map[string]string{"meta.helm.sh/release-name": f.name, "meta.helm.sh/release-namespace": ns}
	}
	return m
}
