package realistic

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Hand-written core/v1 objects, shaped like what `kubectl get -o json` shows on a real cluster: server-set
// metadata (uid, resourceVersion, creationTimestamp, managedFields), defaulted spec fields, and a status.

func init() {
	register("v1", "Pod", func() runtime.Object { return Pod() })
	register("v1", "ConfigMap", func() runtime.Object { return LargeConfigMap() })
	register("v1", "Secret", func() runtime.Object { return Secret() })
	register("v1", "Service", func() runtime.Object { return Service() })
	register("v1", "Node", func() runtime.Object { return Node() })
	register("v1", "Namespace", func() runtime.Object { return Namespace() })
	register("v1", "Event", func() runtime.Object { return Event() })
	register("v1", "Endpoints", func() runtime.Object { return Endpoints() })
	register("v1", "Status", func() runtime.Object { return NotFoundStatus() })
}

func at(d time.Duration) metav1.Time { return metav1.NewTime(Epoch.Add(-d)) }
func atp(d time.Duration) *metav1.Time {
	t := at(d)
	return &t
}
func ptr[T any](v T) *T            { return &v }
func q(s string) resource.Quantity { return resource.MustParse(s) }

func managed(manager string, op metav1.ManagedFieldsOperationType, apiVersion string, t time.Duration, subresource, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{
		Manager: manager, Operation: op, APIVersion: apiVersion, Time: atp(t), FieldsType: "FieldsV1",
		FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}, Subresource: subresource,
	}
}

const (
	webImage      = "ghcr.io/example/web:1.4.2"
	webImageID    = "ghcr.io/example/web@sha256:3c4e7d0b8f1a92e6c5d4b7a8e9f0a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c"
	proxyImage    = "docker.io/envoyproxy/envoy:v1.32.1"
	proxyImageID  = "docker.io/envoyproxy/envoy@sha256:9a8b7c6d5e4f30211f2e3d4c5b6a79880a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d"
	migrateImage  = "ghcr.io/example/web-migrate:1.4.2"
	podTemplateID = "7d4b9c8f6d"
	podName       = "web-" + podTemplateID + "-x2k9p"
)

// webLabels are the labels of the "web" Deployment's pods.
func webLabels(withHash bool) map[string]string {
	l := map[string]string{
		"app.kubernetes.io/name":      "web",
		"app.kubernetes.io/instance":  "web-prod",
		"app.kubernetes.io/component": "frontend",
		"app.kubernetes.io/version":   "1.4.2",
	}
	if withHash {
		l["pod-template-hash"] = podTemplateID
	}
	return l
}

// webPodSpec is the "web" pod spec as stored (after the API server's defaulting).
func webPodSpec() corev1.PodSpec {
	probe := func(port intstr.IntOrString, path string, initial int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: path, Port: port, Scheme: corev1.URISchemeHTTP,
			}},
			InitialDelaySeconds: initial, TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3,
		}
	}
	return corev1.PodSpec{
		Volumes: []corev1.Volume{
			{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "web-config"}, DefaultMode: ptr[int32](420),
			}}},
			{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr(q("1Gi"))}}},
			{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
				SecretName: "web-tls", DefaultMode: ptr[int32](256), Optional: ptr(false),
			}}},
		},
		InitContainers: []corev1.Container{{
			Name: "migrate", Image: migrateImage, Command: []string{"/app/migrate"}, Args: []string{"--database-url=$(DATABASE_URL)", "--timeout=2m"},
			Env: []corev1.EnvVar{{Name: "DATABASE_URL", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "web-db"}, Key: "url",
			}}}},
			Resources: corev1.ResourceRequirements{
				Limits:   corev1.ResourceList{corev1.ResourceMemory: q("128Mi")},
				Requests: corev1.ResourceList{corev1.ResourceCPU: q("50m"), corev1.ResourceMemory: q("64Mi")},
			},
			TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			ImagePullPolicy: corev1.PullIfNotPresent,
		}},
		Containers: []corev1.Container{
			{
				Name: "web", Image: webImage,
				Args: []string{"--listen=:8080", "--metrics-listen=:9090", "--config=/etc/web/config.yaml"},
				Ports: []corev1.ContainerPort{
					{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP},
					{Name: "metrics", ContainerPort: 9090, Protocol: corev1.ProtocolTCP},
				},
				Env: []corev1.EnvVar{
					{Name: "LOG_LEVEL", Value: "info"},
					{Name: "GOMAXPROCS", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{
						Resource: "limits.cpu", Divisor: q("1"),
					}}},
					{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
					{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"}}},
				},
				EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "web-env"}}}},
				Resources: corev1.ResourceRequirements{
					Limits:   corev1.ResourceList{corev1.ResourceCPU: q("500m"), corev1.ResourceMemory: q("256Mi")},
					Requests: corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("128Mi")},
				},
				VolumeMounts: []corev1.VolumeMount{
					{Name: "config", ReadOnly: true, MountPath: "/etc/web"},
					{Name: "cache", MountPath: "/var/cache/web"},
					{Name: "tls", ReadOnly: true, MountPath: "/etc/tls"},
				},
				LivenessProbe:  probe(intstr.FromInt32(8080), "/healthz", 10),
				ReadinessProbe: probe(intstr.FromString("http"), "/readyz", 5),
				StartupProbe: &corev1.Probe{
					ProbeHandler:   corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("http")}},
					TimeoutSeconds: 1, PeriodSeconds: 2, SuccessThreshold: 1, FailureThreshold: 30,
				},
				Lifecycle:              &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 5}}},
				TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				ImagePullPolicy: corev1.PullIfNotPresent,
				SecurityContext: &corev1.SecurityContext{
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					RunAsUser:                ptr[int64](65532),
					RunAsNonRoot:             ptr(true),
					ReadOnlyRootFilesystem:   ptr(true),
					AllowPrivilegeEscalation: ptr(false),
					SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
				},
			},
			{
				Name: "envoy", Image: proxyImage, Args: []string{"-c", "/etc/envoy/envoy.yaml", "--log-level", "warn"},
				Ports: []corev1.ContainerPort{{Name: "https", ContainerPort: 8443, Protocol: corev1.ProtocolTCP}},
				Resources: corev1.ResourceRequirements{
					Limits:   corev1.ResourceList{corev1.ResourceMemory: q("128Mi")},
					Requests: corev1.ResourceList{corev1.ResourceCPU: q("50m"), corev1.ResourceMemory: q("64Mi")},
				},
				VolumeMounts:           []corev1.VolumeMount{{Name: "tls", ReadOnly: true, MountPath: "/etc/tls"}},
				TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				ImagePullPolicy: corev1.PullIfNotPresent,
			},
		},
		RestartPolicy:                 corev1.RestartPolicyAlways,
		TerminationGracePeriodSeconds: ptr[int64](30),
		DNSPolicy:                     corev1.DNSClusterFirst,
		NodeSelector:                  map[string]string{"kubernetes.io/os": "linux"},
		ServiceAccountName:            "web",
		DeprecatedServiceAccount:      "web",
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot: ptr(true), FSGroup: ptr[int64](65532),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
				Weight: 100,
				PodAffinityTerm: corev1.PodAffinityTerm{
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "web"}},
					TopologyKey:   "kubernetes.io/hostname",
				},
			}},
		}},
		SchedulerName: "default-scheduler",
		TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.ScheduleAnyway,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "web"}},
		}},
		PriorityClassName: "business-critical",
	}
}

// Pod is a running pod of the "web" Deployment: owner reference, managedFields of the controller manager and the
// kubelet, probes with numeric and named ports, resource quantities and a full status.
func Pod() *corev1.Pod {
	spec := webPodSpec()
	spec.NodeName = "worker-2"
	spec.Priority = ptr[int32](1000000)
	spec.EnableServiceLinks = ptr(true)
	spec.PreemptionPolicy = ptr(corev1.PreemptLowerPriority)
	spec.Tolerations = []corev1.Toleration{
		{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr[int64](300)},
		{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr[int64](300)},
	}
	spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "kube-api-access-9x7vq", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: ptr[int64](3607), Path: "token"}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{
				Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"},
			}}}},
		},
		DefaultMode: ptr[int32](420),
	}}})
	for i := range spec.Containers {
		spec.Containers[i].VolumeMounts = append(spec.Containers[i].VolumeMounts, corev1.VolumeMount{
			Name: "kube-api-access-9x7vq", ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount",
		})
	}
	started := 2*time.Hour - 41*time.Second
	running := func(name, image, imageID, id string, t time.Duration, restarts int32) corev1.ContainerStatus {
		return corev1.ContainerStatus{
			Name: name, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(t)}},
			Ready: true, RestartCount: restarts, Image: image, ImageID: imageID,
			ContainerID: "containerd://" + id, Started: ptr(true),
			VolumeMounts: []corev1.VolumeMountStatus{{Name: "kube-api-access-9x7vq", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true, RecursiveReadOnly: ptr(corev1.RecursiveReadOnlyDisabled)}},
			User:         &corev1.ContainerUser{Linux: &corev1.LinuxContainerUser{UID: 65532, GID: 65532, SupplementalGroups: []int64{65532}}},
		}
	}
	web := running("web", webImage, webImageID, "4f1c0a9e6b3d2c8f7e5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e", started-3*time.Second, 1)
	web.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: 137, Reason: "OOMKilled", StartedAt: at(started), FinishedAt: at(started - 2*time.Second),
		ContainerID: "containerd://0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9",
	}}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: podName, GenerateName: "web-" + podTemplateID + "-", Namespace: "default",
			UID: uidOf("pod/" + podName), ResourceVersion: "48213377", CreationTimestamp: at(2 * time.Hour),
			Labels: webLabels(true),
			Annotations: map[string]string{
				"kubectl.kubernetes.io/restartedAt": "2026-11-19T16:02:11Z",
				"prometheus.io/scrape":              "true",
				"prometheus.io/port":                "9090",
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-" + podTemplateID,
				UID: uidOf("replicaset/web-" + podTemplateID), Controller: ptr(true), BlockOwnerDeletion: ptr(true),
			}},
			ManagedFields: []metav1.ManagedFieldsEntry{
				managed("kube-controller-manager", metav1.ManagedFieldsOperationUpdate, "v1", 2*time.Hour, "",
					`{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/restartedAt":{},"f:prometheus.io/port":{},"f:prometheus.io/scrape":{}},"f:generateName":{},"f:labels":{".":{},"f:app.kubernetes.io/component":{},"f:app.kubernetes.io/instance":{},"f:app.kubernetes.io/name":{},"f:app.kubernetes.io/version":{},"f:pod-template-hash":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"`+string(uidOf("replicaset/web-"+podTemplateID))+`\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{},"f:ports":{".":{},"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:name":{},"f:protocol":{}}}}},"f:dnsPolicy":{},"f:restartPolicy":{},"f:schedulerName":{}}}`),
				managed("kubelet", metav1.ManagedFieldsOperationUpdate, "v1", started-5*time.Second, "status",
					`{"f:status":{"f:conditions":{"k:{\"type\":\"ContainersReady\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Ready\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:hostIP":{},"f:hostIPs":{},"f:phase":{},"f:podIP":{},"f:podIPs":{".":{},"k:{\"ip\":\"10.244.2.17\"}":{".":{},"f:ip":{}}},"f:startTime":{}}}`),
			},
		},
		Spec: spec,
		Status: corev1.PodStatus{
			ObservedGeneration: 1,
			Phase:              corev1.PodRunning,
			Conditions: []corev1.PodCondition{
				{Type: "PodReadyToStartContainers", Status: corev1.ConditionTrue, LastTransitionTime: at(2*time.Hour - 4*time.Second), ObservedGeneration: 1},
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: at(started + 2*time.Second), ObservedGeneration: 1},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: at(started - 9*time.Second), ObservedGeneration: 1},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: at(started - 9*time.Second), ObservedGeneration: 1},
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at(2 * time.Hour), ObservedGeneration: 1},
			},
			HostIP:    "192.168.10.22",
			HostIPs:   []corev1.HostIP{{IP: "192.168.10.22"}},
			PodIP:     "10.244.2.17",
			PodIPs:    []corev1.PodIP{{IP: "10.244.2.17"}},
			StartTime: atp(2*time.Hour - 1*time.Second),
			InitContainerStatuses: []corev1.ContainerStatus{{
				Name: "migrate", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 0, Reason: "Completed", StartedAt: at(2*time.Hour - 6*time.Second), FinishedAt: at(started + 3*time.Second),
					ContainerID: "containerd://7e6d5c4b3a29180f7e6d5c4b3a29180f7e6d5c4b3a29180f7e6d5c4b3a29180f",
				}},
				Ready: true, Image: migrateImage, ImageID: "ghcr.io/example/web-migrate@sha256:1f2e3d4c5b6a79880f1e2d3c4b5a69788f9e0d1c2b3a49586f7e8d9c0b1a2f3e",
				ContainerID: "containerd://7e6d5c4b3a29180f7e6d5c4b3a29180f7e6d5c4b3a29180f7e6d5c4b3a29180f", Started: ptr(false),
			}},
			ContainerStatuses: []corev1.ContainerStatus{
				running("envoy", proxyImage, proxyImageID, "b7a6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6", started, 0),
				web,
			},
			QOSClass: corev1.PodQOSBurstable,
		},
	}
}

// LargeConfigMap is a ConfigMap with about 30 KB of data: configuration files, a properties file with non-ASCII
// messages (accents, CJK, emoji) and a small binaryData entry.
func LargeConfigMap() *corev1.ConfigMap {
	var nginx strings.Builder
	nginx.WriteString("worker_processes auto;\nevents { worker_connections 1024; }\nhttp {\n  include mime.types;\n  sendfile on;\n")
	for i := 0; i < 64; i++ {
		fmt.Fprintf(&nginx, "  upstream shard_%02d { server shard-%02d.web.default.svc.cluster.local:8080 max_fails=3 fail_timeout=10s; keepalive 16; }\n", i, i)
	}
	nginx.WriteString("  server {\n    listen 8080;\n    location /healthz { return 200 'ok'; }\n  }\n}\n")
	var props strings.Builder
	msgs := []string{
		"Bienvenue, %s ! Votre commande n° %d est confirmée.",
		"Willkommen zurück — Ihre Bestellung Nr. %d ist unterwegs. Grüße, %s",
		"ようこそ、%sさん。ご注文番号 %d を受け付けました。",
		"欢迎，%s！您的订单 %d 已发货 🚚",
		"Добро пожаловать, %s! Заказ № %d оформлен.",
		"مرحبا %s، تم تأكيد طلبك رقم %d",
		"Olá %s, o pedido nº %d está a caminho ☸ 🚀",
	}
	for i := 0; i < 160; i++ {
		m := msgs[i%len(msgs)]
		if strings.Index(m, "%d") < strings.Index(m, "%s") {
			fmt.Fprintf(&props, "message.order.%03d=%s\n", i, fmt.Sprintf(m, 1000+i, "naïve café"))
		} else {
			fmt.Fprintf(&props, "message.order.%03d=%s\n", i, fmt.Sprintf(m, "naïve café", 1000+i))
		}
	}
	var yaml strings.Builder
	yaml.WriteString("server:\n  listen: \":8080\"\n  metricsListen: \":9090\"\nfeatures:\n")
	for i := 0; i < 150; i++ {
		fmt.Fprintf(&yaml, "  - name: feature-flag-%03d\n    enabled: %t\n    rollout: %d\n", i, i%3 != 0, (i*7)%101)
	}
	bin := make([]byte, 256)
	for i := range bin {
		bin[i] = byte(i)
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-config", Namespace: "default", UID: uidOf("configmap/web-config"), ResourceVersion: "48190012",
			CreationTimestamp: at(26 * time.Hour),
			Labels:            map[string]string{"app.kubernetes.io/name": "web", "app.kubernetes.io/instance": "web-prod", "app.kubernetes.io/managed-by": "Helm"},
			Annotations:       map[string]string{"meta.helm.sh/release-name": "web-prod", "meta.helm.sh/release-namespace": "default"},
			ManagedFields: []metav1.ManagedFieldsEntry{managed("helm", metav1.ManagedFieldsOperationUpdate, "v1", 3*time.Hour, "",
				`{"f:binaryData":{".":{},"f:palette.bin":{}},"f:data":{".":{},"f:config.yaml":{},"f:messages.properties":{},"f:nginx.conf":{}},"f:metadata":{"f:annotations":{".":{},"f:meta.helm.sh/release-name":{},"f:meta.helm.sh/release-namespace":{}},"f:labels":{".":{},"f:app.kubernetes.io/instance":{},"f:app.kubernetes.io/managed-by":{},"f:app.kubernetes.io/name":{}}}}`)},
		},
		Data: map[string]string{
			"nginx.conf":          nginx.String(),
			"messages.properties": props.String(),
			"config.yaml":         yaml.String(),
		},
		BinaryData: map[string][]byte{"palette.bin": bin},
	}
}

// Secret is a kubernetes.io/tls Secret.
func Secret() *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-tls", Namespace: "default", UID: uidOf("secret/web-tls"), ResourceVersion: "47811250",
			CreationTimestamp: at(30 * 24 * time.Hour),
			Labels:            map[string]string{"controller.cert-manager.io/fao": "true"},
			Annotations: map[string]string{
				"cert-manager.io/certificate-name": "web-tls", "cert-manager.io/issuer-kind": "ClusterIssuer",
				"cert-manager.io/issuer-name": "letsencrypt", "cert-manager.io/common-name": "web.example.com",
				"cert-manager.io/alt-names": "web.example.com,www.example.com",
			},
			ManagedFields: []metav1.ManagedFieldsEntry{managed("cert-manager-certificates-issuing", metav1.ManagedFieldsOperationApply, "v1", 20*24*time.Hour, "",
				`{"f:data":{"f:tls.crt":{},"f:tls.key":{}},"f:metadata":{"f:annotations":{"f:cert-manager.io/alt-names":{},"f:cert-manager.io/certificate-name":{},"f:cert-manager.io/common-name":{},"f:cert-manager.io/issuer-kind":{},"f:cert-manager.io/issuer-name":{}},"f:labels":{"f:controller.cert-manager.io/fao":{}}},"f:type":{}}`)},
		},
		Data: map[string][]byte{
			"tls.crt": []byte("-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ2FQZW1vLWNlcnQtZm9yLXdhdGNod2lyZTAKBggqhkjOPQQDAjAV\nMRMwEQYDVQQDEwp3ZWIuZXhhbXBsZTAeFw0yNjExMDEwMDAwMDBaFw0yNzAxMzAwMDAwMDBa\n-----END CERTIFICATE-----\n"),
			"tls.key": []byte("-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIKXk0ZmFrZS1rZXktZm9yLWZpeHR1cmVzLW9ubHkAoAoGCCqGSM49AwEHoUQDQgAE\n-----END EC PRIVATE KEY-----\n"),
			"ca.crt":  {},
		},
		Type: corev1.SecretTypeTLS,
	}
}

// Service is a LoadBalancer Service with named and numeric target ports and an assigned ingress address.
func Service() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "default", UID: uidOf("service/web"), ResourceVersion: "47990021",
			CreationTimestamp: at(30 * 24 * time.Hour),
			Labels:            map[string]string{"app.kubernetes.io/name": "web", "app.kubernetes.io/instance": "web-prod"},
			Annotations:       map[string]string{"service.beta.kubernetes.io/aws-load-balancer-type": "nlb"},
			Finalizers:        []string{"service.kubernetes.io/load-balancer-cleanup"},
			ManagedFields: []metav1.ManagedFieldsEntry{
				managed("kubectl", metav1.ManagedFieldsOperationApply, "v1", 30*24*time.Hour, "",
					`{"f:metadata":{"f:annotations":{"f:service.beta.kubernetes.io/aws-load-balancer-type":{}},"f:labels":{"f:app.kubernetes.io/instance":{},"f:app.kubernetes.io/name":{}}},"f:spec":{"f:ports":{"k:{\"port\":443,\"protocol\":\"TCP\"}":{".":{},"f:name":{},"f:port":{},"f:targetPort":{}},"k:{\"port\":9090,\"protocol\":\"TCP\"}":{".":{},"f:name":{},"f:port":{},"f:targetPort":{}}},"f:selector":{},"f:type":{}}}`),
				managed("cloud-controller-manager", metav1.ManagedFieldsOperationUpdate, "v1", 30*24*time.Hour-40*time.Second, "status",
					`{"f:status":{"f:loadBalancer":{"f:ingress":{}}}}`),
			},
		},
		Spec: corev1.ServiceSpec{
			Ports: []corev1.ServicePort{
				{Name: "https", Protocol: corev1.ProtocolTCP, Port: 443, TargetPort: intstr.FromString("https"), NodePort: 31443},
				{Name: "metrics", Protocol: corev1.ProtocolTCP, Port: 9090, TargetPort: intstr.FromInt32(9090), NodePort: 30990},
			},
			Selector:                      map[string]string{"app.kubernetes.io/name": "web", "app.kubernetes.io/instance": "web-prod"},
			ClusterIP:                     "10.96.41.7",
			ClusterIPs:                    []string{"10.96.41.7"},
			Type:                          corev1.ServiceTypeLoadBalancer,
			SessionAffinity:               corev1.ServiceAffinityNone,
			ExternalTrafficPolicy:         corev1.ServiceExternalTrafficPolicyCluster,
			IPFamilies:                    []corev1.IPFamily{corev1.IPv4Protocol},
			IPFamilyPolicy:                ptr(corev1.IPFamilyPolicySingleStack),
			AllocateLoadBalancerNodePorts: ptr(true),
			InternalTrafficPolicy:         ptr(corev1.ServiceInternalTrafficPolicyCluster),
		},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{
			Hostname: "a1b2c3d4e5f6-1234567890.elb.us-east-1.amazonaws.com", IPMode: ptr(corev1.LoadBalancerIPModeProxy),
		}}}},
	}
}

// Node is a worker node with the status a kubelet reports: capacity, allocatable, conditions, addresses, node
// info and a list of cached images.
func Node() *corev1.Node {
	hb := 37 * time.Second
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason, msg string, since time.Duration) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, LastHeartbeatTime: at(hb), LastTransitionTime: at(since), Reason: reason, Message: msg}
	}
	images := []corev1.ContainerImage{
		{Names: []string{"docker.io/library/postgres@sha256:8e0c5d2f4a6b1c3e5f7a9b0d2c4e6f8a1b3c5d7e9f0a2b4c6d8e0f1a3b5c7d9e", "docker.io/library/postgres:17.2"}, SizeBytes: 158492011},
		{Names: []string{"docker.io/envoyproxy/envoy@sha256:9a8b7c6d5e4f30211f2e3d4c5b6a79880a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d", "docker.io/envoyproxy/envoy:v1.32.1"}, SizeBytes: 67103841},
		{Names: []string{"ghcr.io/example/web@sha256:3c4e7d0b8f1a92e6c5d4b7a8e9f0a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c", "ghcr.io/example/web:1.4.2"}, SizeBytes: 41873920},
		{Names: []string{"registry.k8s.io/kube-proxy@sha256:2d4f6a8c0e1b3d5f7a9c1e3b5d7f9a0c2e4b6d8f0a1c3e5b7d9f1a3c5e7b9d0f", "registry.k8s.io/kube-proxy:v1.37.2"}, SizeBytes: 30741231},
		{Names: []string{"quay.io/cilium/cilium@sha256:5f3e1d9b7a5c3e1f9d7b5a3c1e9f7d5b3a1c9e7f5d3b1a9c7e5f3d1b9a7c5e3f", "quay.io/cilium/cilium:v1.17.0"}, SizeBytes: 217389442},
		{Names: []string{"registry.k8s.io/coredns/coredns@sha256:a0b1c2d3e4f5061728394a5b6c7d8e9f0a1b2c3d4e5f60718293a4b5c6d7e8f9", "registry.k8s.io/coredns/coredns:v1.12.1"}, SizeBytes: 22384805},
		{Names: []string{"docker.io/grafana/alloy@sha256:c1d2e3f4a5b60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9a", "docker.io/grafana/alloy:v1.5.0"}, SizeBytes: 129374617},
		{Names: []string{"registry.k8s.io/pause@sha256:ee6521f290b2168b6e0935a181d4cff9be1ac3f505666ef0e3c98fae8199917a", "registry.k8s.io/pause:3.10"}, SizeBytes: 320368},
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: "worker-2", UID: uidOf("node/worker-2"), ResourceVersion: "48213290", CreationTimestamp: at(62 * 24 * time.Hour),
			Labels: map[string]string{
				"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
				"kubernetes.io/arch": "amd64", "kubernetes.io/hostname": "worker-2", "kubernetes.io/os": "linux",
				"node.kubernetes.io/instance-type": "m6i.xlarge",
				"topology.kubernetes.io/region":    "us-east-1", "topology.kubernetes.io/zone": "us-east-1b",
				"node-role.kubernetes.io/worker": "",
			},
			Annotations: map[string]string{
				"node.alpha.kubernetes.io/ttl":                           "0",
				"volumes.kubernetes.io/controller-managed-attach-detach": "true",
				"kubeadm.alpha.kubernetes.io/cri-socket":                 "unix:///run/containerd/containerd.sock",
				"csi.volume.kubernetes.io/nodeid":                        `{"ebs.csi.aws.com":"i-0a1b2c3d4e5f60718"}`,
			},
			ManagedFields: []metav1.ManagedFieldsEntry{
				managed("kubelet", metav1.ManagedFieldsOperationUpdate, "v1", 62*24*time.Hour, "",
					`{"f:metadata":{"f:annotations":{".":{},"f:volumes.kubernetes.io/controller-managed-attach-detach":{}},"f:labels":{".":{},"f:beta.kubernetes.io/arch":{},"f:beta.kubernetes.io/os":{},"f:kubernetes.io/arch":{},"f:kubernetes.io/hostname":{},"f:kubernetes.io/os":{}}},"f:spec":{"f:providerID":{}}}`),
				managed("kube-controller-manager", metav1.ManagedFieldsOperationUpdate, "v1", 62*24*time.Hour-20*time.Second, "",
					`{"f:metadata":{"f:annotations":{"f:node.alpha.kubernetes.io/ttl":{}}},"f:spec":{"f:podCIDR":{},"f:podCIDRs":{".":{},"v:\"10.244.2.0/24\"":{}}}}`),
				managed("kubelet", metav1.ManagedFieldsOperationUpdate, "v1", hb, "status",
					`{"f:status":{"f:allocatable":{"f:ephemeral-storage":{}},"f:conditions":{"k:{\"type\":\"Ready\"}":{"f:lastHeartbeatTime":{},"f:lastTransitionTime":{},"f:message":{},"f:reason":{},"f:status":{}}},"f:images":{},"f:nodeInfo":{"f:bootID":{},"f:containerRuntimeVersion":{},"f:kernelVersion":{},"f:kubeletVersion":{}}}}`),
			},
		},
		Spec: corev1.NodeSpec{
			PodCIDR: "10.244.2.0/24", PodCIDRs: []string{"10.244.2.0/24"}, ProviderID: "aws:///us-east-1b/i-0a1b2c3d4e5f60718",
		},
		Status: corev1.NodeStatus{
			Capacity: corev1.ResourceList{
				corev1.ResourceCPU: q("4"), corev1.ResourceEphemeralStorage: q("104845292Ki"), "hugepages-1Gi": q("0"),
				"hugepages-2Mi": q("0"), corev1.ResourceMemory: q("16092956Ki"), corev1.ResourcePods: q("110"),
			},
			Allocatable: corev1.ResourceList{
				corev1.ResourceCPU: q("3920m"), corev1.ResourceEphemeralStorage: q("95551679124"), "hugepages-1Gi": q("0"),
				"hugepages-2Mi": q("0"), corev1.ResourceMemory: q("15056668Ki"), corev1.ResourcePods: q("110"),
			},
			Conditions: []corev1.NodeCondition{
				cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available", 62*24*time.Hour),
				cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure", 62*24*time.Hour),
				cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available", 62*24*time.Hour),
				cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status", 62*24*time.Hour-50*time.Second),
			},
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: "192.168.10.22"},
				{Type: corev1.NodeHostName, Address: "worker-2"},
				{Type: corev1.NodeInternalDNS, Address: "ip-192-168-10-22.ec2.internal"},
			},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
			NodeInfo: corev1.NodeSystemInfo{
				MachineID: "ec2a1b2c3d4e5f60718293a4b5c6d7e8", SystemUUID: "ec2a1b2c-3d4e-5f60-7182-93a4b5c6d7e8",
				BootID: "5b0f3c1e-8d2a-4f6b-9c7e-1a3d5f7b9e2c", KernelVersion: "6.1.119-129.201.amzn2023.x86_64",
				OSImage: "Amazon Linux 2023.6.20241212", ContainerRuntimeVersion: "containerd://2.0.1",
				KubeletVersion: "v1.37.2", KubeProxyVersion: "", OperatingSystem: "linux", Architecture: "amd64",
				Swap: &corev1.NodeSwapStatus{Capacity: ptr[int64](0)},
			},
			Images:          images,
			VolumesInUse:    []corev1.UniqueVolumeName{"kubernetes.io/csi/ebs.csi.aws.com^vol-0f1e2d3c4b5a69788"},
			VolumesAttached: []corev1.AttachedVolume{{Name: "kubernetes.io/csi/ebs.csi.aws.com^vol-0f1e2d3c4b5a69788", DevicePath: ""}},
			RuntimeHandlers: []corev1.NodeRuntimeHandler{
				{Name: "runc", Features: &corev1.NodeRuntimeHandlerFeatures{RecursiveReadOnlyMounts: ptr(true), UserNamespaces: ptr(true)}},
				{Name: "", Features: &corev1.NodeRuntimeHandlerFeatures{RecursiveReadOnlyMounts: ptr(true), UserNamespaces: ptr(true)}},
			},
			Features: &corev1.NodeFeatures{SupplementalGroupsPolicy: ptr(true)},
		},
	}
}

// Namespace is an active namespace with the automatic name label.
func Namespace() *corev1.Namespace {
	return &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{
			Name: "payments", UID: uidOf("namespace/payments"), ResourceVersion: "1182", CreationTimestamp: at(90 * 24 * time.Hour),
			Labels: map[string]string{
				"kubernetes.io/metadata.name": "payments", "team": "payments",
				"pod-security.kubernetes.io/enforce": "restricted",
			},
			Annotations: map[string]string{"scheduler.alpha.kubernetes.io/node-selector": "kubernetes.io/os=linux"},
			ManagedFields: []metav1.ManagedFieldsEntry{managed("kubectl-create", metav1.ManagedFieldsOperationUpdate, "v1", 90*24*time.Hour, "",
				`{"f:metadata":{"f:labels":{".":{},"f:kubernetes.io/metadata.name":{}}}}`)},
		},
		Spec:   corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}},
		Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
	}
}

// Event is a core/v1 Event the kubelet writes (with a zero eventTime, as the kubelet's legacy recorder leaves it).
func Event() *corev1.Event {
	return &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name: podName + ".18a3f2c9d1e0b7a4", Namespace: "default", UID: uidOf("event/" + podName), ResourceVersion: "48213102",
			CreationTimestamp: at(2*time.Hour - 30*time.Second),
			ManagedFields: []metav1.ManagedFieldsEntry{managed("kubelet", metav1.ManagedFieldsOperationUpdate, "v1", 2*time.Hour-30*time.Second, "",
				`{"f:count":{},"f:firstTimestamp":{},"f:involvedObject":{},"f:lastTimestamp":{},"f:message":{},"f:reason":{},"f:reportingComponent":{},"f:reportingInstance":{},"f:source":{"f:component":{},"f:host":{}},"f:type":{}}`)},
		},
		InvolvedObject: corev1.ObjectReference{
			Kind: "Pod", Namespace: "default", Name: podName, UID: uidOf("pod/" + podName), APIVersion: "v1",
			ResourceVersion: "48212988", FieldPath: "spec.containers{web}",
		},
		Reason:              "Pulled",
		Message:             `Successfully pulled image "` + webImage + `" in 1.204s (1.204s including waiting). Image size: 41873920 bytes.`,
		Source:              corev1.EventSource{Component: "kubelet", Host: "worker-2"},
		FirstTimestamp:      at(2*time.Hour - 30*time.Second),
		LastTimestamp:       at(2*time.Hour - 30*time.Second),
		Count:               1,
		Type:                corev1.EventTypeNormal,
		ReportingController: "kubelet",
		ReportingInstance:   "worker-2",
	}
}

// Endpoints is the Endpoints object of the "web" Service: ready and not-ready addresses with pod references.
func Endpoints() *corev1.Endpoints {
	addr := func(ip, pod, node string) corev1.EndpointAddress {
		return corev1.EndpointAddress{IP: ip, NodeName: ptr(node), TargetRef: &corev1.ObjectReference{
			Kind: "Pod", Namespace: "default", Name: pod, UID: uidOf("pod/" + pod),
		}}
	}
	return &corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "default", UID: uidOf("endpoints/web"), ResourceVersion: "48213380", CreationTimestamp: at(30 * 24 * time.Hour),
			Labels:      map[string]string{"app.kubernetes.io/name": "web", "app.kubernetes.io/instance": "web-prod", "endpoints.kubernetes.io/managed-by": "endpoint-controller"},
			Annotations: map[string]string{"endpoints.kubernetes.io/last-change-trigger-time": "2026-11-20T07:30:50Z"},
			ManagedFields: []metav1.ManagedFieldsEntry{managed("kube-controller-manager", metav1.ManagedFieldsOperationUpdate, "v1", 2*time.Hour-50*time.Second, "",
				`{"f:metadata":{"f:annotations":{".":{},"f:endpoints.kubernetes.io/last-change-trigger-time":{}},"f:labels":{".":{},"f:app.kubernetes.io/instance":{},"f:app.kubernetes.io/name":{},"f:endpoints.kubernetes.io/managed-by":{}}},"f:subsets":{}}`)},
		},
		Subsets: []corev1.EndpointSubset{{
			Addresses: []corev1.EndpointAddress{
				addr("10.244.1.9", "web-"+podTemplateID+"-m4zt8", "worker-1"),
				addr("10.244.2.17", podName, "worker-2"),
			},
			NotReadyAddresses: []corev1.EndpointAddress{addr("10.244.3.4", "web-"+podTemplateID+"-q7wlc", "worker-3")},
			Ports: []corev1.EndpointPort{
				{Name: "https", Port: 8443, Protocol: corev1.ProtocolTCP},
				{Name: "metrics", Port: 9090, Protocol: corev1.ProtocolTCP},
			},
		}},
	}
}

// NotFoundStatus is the Status the API server returns for a missing object.
func NotFoundStatus() *metav1.Status {
	return &metav1.Status{
		Status:  metav1.StatusFailure,
		Message: `pods "web-7d4b9c8f6d-gone1" not found`,
		Reason:  metav1.StatusReasonNotFound,
		Details: &metav1.StatusDetails{Name: "web-7d4b9c8f6d-gone1", Kind: "pods"},
		Code:    404,
	}
}
