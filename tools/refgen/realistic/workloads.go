package realistic

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Hand-written apps/v1, batch/v1, discovery.k8s.io/v1 and coordination.k8s.io/v1 objects.

func init() {
	register("apps/v1", "Deployment", func() runtime.Object { return Deployment() })
	register("apps/v1", "ReplicaSet", func() runtime.Object { return ReplicaSet() })
	register("apps/v1", "StatefulSet", func() runtime.Object { return StatefulSet() })
	register("apps/v1", "DaemonSet", func() runtime.Object { return DaemonSet() })
	register("batch/v1", "Job", func() runtime.Object { return Job() })
	register("discovery.k8s.io/v1", "EndpointSlice", func() runtime.Object { return EndpointSlice() })
	register("coordination.k8s.io/v1", "Lease", func() runtime.Object { return Lease() })
}

const lastApplied = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"labels":{"app.kubernetes.io/instance":"web-prod","app.kubernetes.io/name":"web"},"name":"web","namespace":"default"},"spec":{"replicas":3,"selector":{"matchLabels":{"app.kubernetes.io/instance":"web-prod","app.kubernetes.io/name":"web"}},"template":{"metadata":{"labels":{"app.kubernetes.io/component":"frontend","app.kubernetes.io/instance":"web-prod","app.kubernetes.io/name":"web","app.kubernetes.io/version":"1.4.2"}},"spec":{"containers":[{"image":"ghcr.io/example/web:1.4.2","name":"web"}]}}}}
`

func webSelector() *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "web", "app.kubernetes.io/instance": "web-prod"}}
}

// Deployment is the "web" Deployment, three replicas, rolled out to its third revision.
func Deployment() *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "default", UID: uidOf("deployment/web"), ResourceVersion: "48213412", Generation: 7,
			CreationTimestamp: at(30 * 24 * time.Hour),
			Labels:            map[string]string{"app.kubernetes.io/name": "web", "app.kubernetes.io/instance": "web-prod"},
			Annotations: map[string]string{
				"deployment.kubernetes.io/revision":                "3",
				"kubectl.kubernetes.io/last-applied-configuration": lastApplied,
			},
			ManagedFields: []metav1.ManagedFieldsEntry{
				managed("kubectl-client-side-apply", metav1.ManagedFieldsOperationUpdate, "apps/v1", 3*time.Hour, "",
					`{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}},"f:labels":{".":{},"f:app.kubernetes.io/instance":{},"f:app.kubernetes.io/name":{}}},"f:spec":{"f:progressDeadlineSeconds":{},"f:replicas":{},"f:revisionHistoryLimit":{},"f:selector":{},"f:strategy":{"f:rollingUpdate":{".":{},"f:maxSurge":{},"f:maxUnavailable":{}},"f:type":{}},"f:template":{"f:metadata":{"f:labels":{".":{},"f:app.kubernetes.io/name":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`),
				managed("kube-controller-manager", metav1.ManagedFieldsOperationUpdate, "apps/v1", 2*time.Hour-50*time.Second, "status",
					`{"f:metadata":{"f:annotations":{"f:deployment.kubernetes.io/revision":{}}},"f:status":{"f:availableReplicas":{},"f:conditions":{".":{},"k:{\"type\":\"Available\"}":{".":{},"f:lastTransitionTime":{},"f:lastUpdateTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Progressing\"}":{".":{},"f:lastTransitionTime":{},"f:lastUpdateTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}}},"f:observedGeneration":{},"f:readyReplicas":{},"f:replicas":{},"f:updatedReplicas":{}}}`),
			},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr[int32](3),
			Selector: webSelector(),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      webLabels(false),
					Annotations: map[string]string{"kubectl.kubernetes.io/restartedAt": "2026-11-19T16:02:11Z"},
				},
				Spec: webPodSpec(),
			},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
				MaxUnavailable: ptr(intstr.FromString("25%")), MaxSurge: ptr(intstr.FromString("25%")),
			}},
			RevisionHistoryLimit:    ptr[int32](10),
			ProgressDeadlineSeconds: ptr[int32](600),
		},
		Status: appsv1.DeploymentStatus{
			ObservedGeneration: 7, Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 3,
			TerminatingReplicas: ptr[int32](0),
			Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, LastUpdateTime: at(30 * 24 * time.Hour), LastTransitionTime: at(30 * 24 * time.Hour),
					Reason: "MinimumReplicasAvailable", Message: "Deployment has minimum availability."},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, LastUpdateTime: at(2*time.Hour - 50*time.Second), LastTransitionTime: at(30 * 24 * time.Hour),
					Reason: "NewReplicaSetAvailable", Message: `ReplicaSet "web-7d4b9c8f6d" has successfully progressed.`},
			},
		},
	}
}

// ReplicaSet is the Deployment's current ReplicaSet.
func ReplicaSet() *appsv1.ReplicaSet {
	sel := webSelector()
	sel.MatchLabels["pod-template-hash"] = podTemplateID
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-" + podTemplateID, Namespace: "default", UID: uidOf("replicaset/web-" + podTemplateID), ResourceVersion: "48213409",
			Generation: 2, CreationTimestamp: at(3 * time.Hour),
			Labels: webLabels(true),
			Annotations: map[string]string{
				"deployment.kubernetes.io/desired-replicas": "3", "deployment.kubernetes.io/max-replicas": "4",
				"deployment.kubernetes.io/revision": "3",
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: uidOf("deployment/web"),
				Controller: ptr(true), BlockOwnerDeletion: ptr(true),
			}},
			ManagedFields: []metav1.ManagedFieldsEntry{
				managed("kube-controller-manager", metav1.ManagedFieldsOperationUpdate, "apps/v1", 3*time.Hour, "",
					`{"f:metadata":{"f:annotations":{".":{},"f:deployment.kubernetes.io/desired-replicas":{},"f:deployment.kubernetes.io/max-replicas":{},"f:deployment.kubernetes.io/revision":{}},"f:labels":{".":{},"f:pod-template-hash":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"`+string(uidOf("deployment/web"))+`\"}":{}}},"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{}}}`),
				managed("kube-controller-manager", metav1.ManagedFieldsOperationUpdate, "apps/v1", 2*time.Hour-50*time.Second, "status",
					`{"f:status":{"f:availableReplicas":{},"f:fullyLabeledReplicas":{},"f:observedGeneration":{},"f:readyReplicas":{},"f:replicas":{}}}`),
			},
		},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr[int32](3), Selector: sel,
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: webLabels(true)}, Spec: webPodSpec()},
		},
		Status: appsv1.ReplicaSetStatus{
			Replicas: 3, FullyLabeledReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 3, ObservedGeneration: 2,
			TerminatingReplicas: ptr[int32](0),
		},
	}
}

// StatefulSet is a three-member PostgreSQL StatefulSet with a volume claim template.
func StatefulSet() *appsv1.StatefulSet {
	labels := map[string]string{"app.kubernetes.io/name": "postgres", "app.kubernetes.io/instance": "orders-db"}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{
			Name: "orders-db", Namespace: "payments", UID: uidOf("statefulset/orders-db"), ResourceVersion: "47711023", Generation: 4,
			CreationTimestamp: at(45 * 24 * time.Hour), Labels: labels,
			ManagedFields: []metav1.ManagedFieldsEntry{
				managed("kubectl", metav1.ManagedFieldsOperationApply, "apps/v1", 10*24*time.Hour, "",
					`{"f:metadata":{"f:labels":{"f:app.kubernetes.io/instance":{},"f:app.kubernetes.io/name":{}}},"f:spec":{"f:replicas":{},"f:selector":{},"f:serviceName":{},"f:template":{"f:metadata":{"f:labels":{"f:app.kubernetes.io/instance":{},"f:app.kubernetes.io/name":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"postgres\"}":{".":{},"f:image":{},"f:name":{}}}}},"f:volumeClaimTemplates":{}}}`),
				managed("kube-controller-manager", metav1.ManagedFieldsOperationUpdate, "apps/v1", 10*24*time.Hour-90*time.Second, "status",
					`{"f:status":{"f:availableReplicas":{},"f:collisionCount":{},"f:currentReplicas":{},"f:currentRevision":{},"f:observedGeneration":{},"f:readyReplicas":{},"f:replicas":{},"f:updateRevision":{},"f:updatedReplicas":{}}}`),
			},
		},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{
						Name: "postgres", Image: "docker.io/library/postgres:17.2",
						Ports: []corev1.ContainerPort{{Name: "postgres", ContainerPort: 5432, Protocol: corev1.ProtocolTCP}},
						Env: []corev1.EnvVar{
							{Name: "PGDATA", Value: "/var/lib/postgresql/data/pgdata"},
							{Name: "POSTGRES_PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
								LocalObjectReference: corev1.LocalObjectReference{Name: "orders-db"}, Key: "password",
							}}},
						},
						Resources: corev1.ResourceRequirements{
							Limits:   corev1.ResourceList{corev1.ResourceMemory: q("2Gi")},
							Requests: corev1.ResourceList{corev1.ResourceCPU: q("500m"), corev1.ResourceMemory: q("2Gi")},
						},
						VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/postgresql/data"}},
						ReadinessProbe: &corev1.Probe{
							ProbeHandler:   corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"pg_isready", "-U", "postgres"}}},
							TimeoutSeconds: 5, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 6,
						},
						TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
						ImagePullPolicy: corev1.PullIfNotPresent,
					}},
					RestartPolicy: corev1.RestartPolicyAlways, TerminationGracePeriodSeconds: ptr[int64](120),
					DNSPolicy: corev1.DNSClusterFirst, SchedulerName: "default-scheduler",
					SecurityContext: &corev1.PodSecurityContext{FSGroup: ptr[int64](999)},
				},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: q("50Gi")}},
					StorageClassName: ptr("gp3"),
					VolumeMode:       ptr(corev1.PersistentVolumeFilesystem),
				},
				Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
			}},
			ServiceName:         "orders-db-headless",
			PodManagementPolicy: appsv1.OrderedReadyPodManagement,
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr[int32](0), MaxUnavailable: ptr(intstr.FromInt32(1))}},
			RevisionHistoryLimit: ptr[int32](10),
			PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
			},
		},
		Status: appsv1.StatefulSetStatus{
			ObservedGeneration: 4, Replicas: 3, ReadyReplicas: 3, CurrentReplicas: 3, UpdatedReplicas: 3, AvailableReplicas: 3,
			CurrentRevision: "orders-db-5c9f7b6d48", UpdateRevision: "orders-db-5c9f7b6d48", CollisionCount: ptr[int32](0),
		},
	}
}

// DaemonSet is a log collector on every node, tolerating every taint.
func DaemonSet() *appsv1.DaemonSet {
	labels := map[string]string{"app.kubernetes.io/name": "alloy", "app.kubernetes.io/instance": "logs"}
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{
			Name: "alloy-logs", Namespace: "monitoring", UID: uidOf("daemonset/alloy-logs"), ResourceVersion: "48201337", Generation: 2,
			CreationTimestamp: at(20 * 24 * time.Hour), Labels: labels,
			Annotations: map[string]string{"deprecated.daemonset.template.generation": "2"},
			ManagedFields: []metav1.ManagedFieldsEntry{managed("kube-controller-manager", metav1.ManagedFieldsOperationUpdate, "apps/v1", 6*time.Hour, "status",
				`{"f:status":{"f:currentNumberScheduled":{},"f:desiredNumberScheduled":{},"f:numberAvailable":{},"f:numberReady":{},"f:observedGeneration":{},"f:updatedNumberScheduled":{}}}`)},
		},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{"kubectl.kubernetes.io/default-container": "alloy"}},
				Spec: corev1.PodSpec{
					Volumes: []corev1.Volume{{Name: "varlog", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
						Path: "/var/log", Type: ptr(corev1.HostPathUnset),
					}}}},
					Containers: []corev1.Container{{
						Name: "alloy", Image: "docker.io/grafana/alloy:v1.5.0",
						Args:  []string{"run", "/etc/alloy/config.alloy", "--server.http.listen-addr=0.0.0.0:12345"},
						Ports: []corev1.ContainerPort{{Name: "http-metrics", ContainerPort: 12345, Protocol: corev1.ProtocolTCP}},
						Env: []corev1.EnvVar{{Name: "HOSTNAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
							APIVersion: "v1", FieldPath: "spec.nodeName",
						}}}},
						Resources: corev1.ResourceRequirements{
							Limits:   corev1.ResourceList{corev1.ResourceMemory: q("512Mi")},
							Requests: corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("256Mi")},
						},
						VolumeMounts:           []corev1.VolumeMount{{Name: "varlog", ReadOnly: true, MountPath: "/var/log"}},
						TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
						ImagePullPolicy: corev1.PullIfNotPresent,
					}},
					RestartPolicy: corev1.RestartPolicyAlways, TerminationGracePeriodSeconds: ptr[int64](30),
					DNSPolicy: corev1.DNSClusterFirstWithHostNet, HostNetwork: true, ServiceAccountName: "alloy",
					DeprecatedServiceAccount: "alloy", SchedulerName: "default-scheduler", PriorityClassName: "system-node-critical",
					Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
				},
			},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: ptr(intstr.FromInt32(1)), MaxSurge: ptr(intstr.FromInt32(0))}},
			RevisionHistoryLimit: ptr[int32](10),
		},
		Status: appsv1.DaemonSetStatus{
			CurrentNumberScheduled: 5, NumberMisscheduled: 0, DesiredNumberScheduled: 5, NumberReady: 5,
			ObservedGeneration: 2, UpdatedNumberScheduled: 5, NumberAvailable: 5,
		},
	}
}

// Job is a finished Job created by a CronJob.
func Job() *batchv1.Job {
	uid := uidOf("job/report-29412340")
	labels := map[string]string{
		"batch.kubernetes.io/controller-uid": string(uid), "batch.kubernetes.io/job-name": "report-29412340",
		"controller-uid": string(uid), "job-name": "report-29412340",
	}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name: "report-29412340", Namespace: "payments", UID: uid, ResourceVersion: "48180042", Generation: 1,
			CreationTimestamp: at(40 * time.Minute),
			Labels:            map[string]string{"batch.kubernetes.io/controller-uid": string(uid), "batch.kubernetes.io/job-name": "report-29412340", "controller-uid": string(uid), "job-name": "report-29412340"},
			Annotations:       map[string]string{"batch.kubernetes.io/cronjob-scheduled-timestamp": "2026-11-20T08:50:00Z"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: "report", UID: uidOf("cronjob/report"),
				Controller: ptr(true), BlockOwnerDeletion: ptr(true)}},
			Finalizers: nil,
			ManagedFields: []metav1.ManagedFieldsEntry{
				managed("kube-controller-manager", metav1.ManagedFieldsOperationUpdate, "batch/v1", 40*time.Minute, "",
					`{"f:metadata":{"f:annotations":{".":{},"f:batch.kubernetes.io/cronjob-scheduled-timestamp":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"`+string(uidOf("cronjob/report"))+`\"}":{}}},"f:spec":{"f:backoffLimit":{},"f:completionMode":{},"f:completions":{},"f:manualSelector":{},"f:parallelism":{},"f:podReplacementPolicy":{},"f:suspend":{},"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"report\"}":{".":{},"f:args":{},"f:image":{},"f:name":{}}},"f:restartPolicy":{}}}}}`),
				managed("kube-controller-manager", metav1.ManagedFieldsOperationUpdate, "batch/v1", 37*time.Minute, "status",
					`{"f:status":{"f:completionTime":{},"f:conditions":{},"f:ready":{},"f:startTime":{},"f:succeeded":{},"f:terminating":{},"f:uncountedTerminatedPods":{}}}`),
			},
		},
		Spec: batchv1.JobSpec{
			Parallelism: ptr[int32](1), Completions: ptr[int32](1), BackoffLimit: ptr[int32](6),
			ActiveDeadlineSeconds:   ptr[int64](1800),
			TTLSecondsAfterFinished: ptr[int32](86400),
			Selector:                &metav1.LabelSelector{MatchLabels: map[string]string{"batch.kubernetes.io/controller-uid": string(uid)}},
			ManualSelector:          ptr(false),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{
						Name: "report", Image: "ghcr.io/example/report:2.0.0", Args: []string{"--since=24h", "--format=csv"},
						Resources:              corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("250m"), corev1.ResourceMemory: q("512Mi")}},
						TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
						ImagePullPolicy: corev1.PullIfNotPresent,
					}},
					RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: ptr[int64](30),
					DNSPolicy: corev1.DNSClusterFirst, SchedulerName: "default-scheduler", SecurityContext: &corev1.PodSecurityContext{},
				},
			},
			CompletionMode:       ptr(batchv1.NonIndexedCompletion),
			Suspend:              ptr(false),
			PodReplacementPolicy: ptr(batchv1.TerminatingOrFailed),
		},
		Status: batchv1.JobStatus{
			Conditions: []batchv1.JobCondition{
				{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastProbeTime: at(37 * time.Minute), LastTransitionTime: at(37 * time.Minute),
					Reason: "CompletionsReached", Message: "Reached expected number of succeeded pods"},
				{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastProbeTime: at(37 * time.Minute), LastTransitionTime: at(37 * time.Minute),
					Reason: "CompletionsReached", Message: "Reached expected number of succeeded pods"},
			},
			StartTime: atp(40 * time.Minute), CompletionTime: atp(37 * time.Minute), Succeeded: 1,
			Terminating: ptr[int32](0), Ready: ptr[int32](0),
			UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{},
		},
	}
}

// EndpointSlice is the "web" Service's slice: three endpoints in two zones, one not ready.
func EndpointSlice() *discoveryv1.EndpointSlice {
	ep := func(ip, pod, node, zone string, ready bool) discoveryv1.Endpoint {
		return discoveryv1.Endpoint{
			Addresses:  []string{ip},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr(ready), Serving: ptr(ready), Terminating: ptr(false)},
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: pod, UID: uidOf("pod/" + pod)},
			NodeName:   ptr(node), Zone: ptr(zone),
			Hints: &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: zone}}},
		}
	}
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-8xk2p", GenerateName: "web-", Namespace: "default", UID: uidOf("endpointslice/web-8xk2p"), ResourceVersion: "48213381",
			Generation: 14, CreationTimestamp: at(30 * 24 * time.Hour),
			Labels: map[string]string{
				"app.kubernetes.io/name": "web", "app.kubernetes.io/instance": "web-prod",
				"endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io", "kubernetes.io/service-name": "web",
			},
			Annotations: map[string]string{"endpoints.kubernetes.io/last-change-trigger-time": "2026-11-20T07:30:50Z"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: "web", UID: uidOf("service/web"),
				Controller: ptr(true), BlockOwnerDeletion: ptr(true)}},
			ManagedFields: []metav1.ManagedFieldsEntry{managed("kube-controller-manager", metav1.ManagedFieldsOperationUpdate, "discovery.k8s.io/v1", 2*time.Hour-50*time.Second, "",
				`{"f:addressType":{},"f:endpoints":{},"f:metadata":{"f:annotations":{".":{},"f:endpoints.kubernetes.io/last-change-trigger-time":{}},"f:generateName":{},"f:labels":{".":{},"f:endpointslice.kubernetes.io/managed-by":{},"f:kubernetes.io/service-name":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"`+string(uidOf("service/web"))+`\"}":{}}},"f:ports":{}}`)},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{
			ep("10.244.1.9", "web-"+podTemplateID+"-m4zt8", "worker-1", "us-east-1a", true),
			ep("10.244.2.17", podName, "worker-2", "us-east-1b", true),
			ep("10.244.3.4", "web-"+podTemplateID+"-q7wlc", "worker-3", "us-east-1b", false),
		},
		Ports: []discoveryv1.EndpointPort{
			{Name: ptr("https"), Protocol: ptr(corev1.ProtocolTCP), Port: ptr[int32](8443)},
			{Name: ptr("metrics"), Protocol: ptr(corev1.ProtocolTCP), Port: ptr[int32](9090), AppProtocol: ptr("http")},
		},
	}
}

// Lease is a node heartbeat Lease in kube-node-lease (renewTime has microseconds).
func Lease() *coordinationv1.Lease {
	renew := metav1.NewMicroTime(Epoch.Add(-7*time.Second - 123456*time.Microsecond))
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Name: "worker-2", Namespace: "kube-node-lease", UID: uidOf("lease/worker-2"), ResourceVersion: "48213455",
			CreationTimestamp: at(62 * 24 * time.Hour),
			OwnerReferences:   []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "worker-2", UID: uidOf("node/worker-2")}},
			ManagedFields: []metav1.ManagedFieldsEntry{managed("kubelet", metav1.ManagedFieldsOperationUpdate, "coordination.k8s.io/v1", 7*time.Second, "",
				`{"f:metadata":{"f:ownerReferences":{".":{},"k:{\"uid\":\"`+string(uidOf("node/worker-2"))+`\"}":{}}},"f:spec":{"f:holderIdentity":{},"f:leaseDurationSeconds":{},"f:renewTime":{}}}`)},
		},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr("worker-2"), LeaseDurationSeconds: ptr[int32](40), RenewTime: &renew,
		},
	}
}
