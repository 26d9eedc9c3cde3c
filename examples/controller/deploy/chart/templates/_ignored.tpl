{{/* ingress-nginx chart keys ramjet accepts but does not honour, each with
ingress-nginx's default (a values file that keeps it loses nothing) and
what ramjet does instead. NOTES.txt lists those a values file changes. */}}
{{- define "ramjet.ignored" -}}
controller.name:
  default: controller
  why: object names follow the release name
nameOverride:
  default: ""
  why: object names follow the release name
fullnameOverride:
  default: ""
  why: object names follow the release name
controller.image:
  default: {chroot: false, image: ingress-nginx/controller, tag: v1.15.1, digest: "sha256:594ceea76b01c592858f803f9ff4d2cb40542cae2060410b2c95f75907d659e1", digestChroot: "sha256:af31d00c9d82c612896b380a9003bd36843b7647b98e4588251c66325317bc72", pullPolicy: IfNotPresent, runAsNonRoot: true, runAsUser: 101, runAsGroup: 82, allowPrivilegeEscalation: false, seccompProfile: {type: RuntimeDefault}, readOnlyRootFilesystem: false}
  why: it names nginx's image; ramjet's is image.repository, image.tag and image.pullPolicy
global.image.registry:
  default: registry.k8s.io
  why: ramjet's image is image.repository (the registry still applies to kube-webhook-certgen)
controller.enableAnnotationValidations:
  default: true
  why: ramjet always validates annotations
controller.ingressClassByName:
  default: false
  why: ramjet matches IngressClasses by spec.controller (ingressClassResource.controllerValue)
controller.enableTopologyAwareRouting:
  default: false
  why: ramjet balances over every ready endpoint
controller.disableLeaderElection:
  default: false
  why: every replica serves; the election only picks who writes status
controller.electionTTL:
  default: ""
  why: the Lease timings are client-go's defaults
controller.scope.namespaceSelector:
  default: ""
  why: ramjet watches one namespace (scope.enabled) or all
controller.maxmindLicenseKey:
  default: ""
  why: ramjet has no GeoIP
controller.keda.enabled:
  default: false
  why: scale with controller.autoscaling (a HorizontalPodAutoscaler)
controller.enableMimalloc:
  default: true
  why: it is nginx's allocator
controller.customTemplate.configMapName:
  default: ""
  why: ramjet has no nginx.conf template
controller.livenessProbe:
  default: {httpGet: {path: /healthz, port: 10254, scheme: HTTP}, initialDelaySeconds: 10, periodSeconds: 10, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 5}
  why: ramjet's probes are its own, /healthz (healthCheckPath) and /readyz, which fails while draining
controller.readinessProbe:
  default: {httpGet: {path: /healthz, port: 10254, scheme: HTTP}, initialDelaySeconds: 10, periodSeconds: 10, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3}
  why: ramjet's probes are its own, /healthz (healthCheckPath) and /readyz, which fails while draining
controller.startupProbe:
  default: null
  why: ramjet's probes are its own
controller.healthCheckHost:
  default: ""
  why: the metrics port listens on every address
controller.lifecycle:
  default: {preStop: {exec: {command: [/wait-shutdown]}}}
  why: ramjet's preStop is its own drain (/controller -wait-shutdown)
controller.extraModules:
  default: []
  why: they are nginx modules
controller.admissionWebhooks.certManager.enabled:
  default: false
  why: the webhook's certificate comes from kube-webhook-certgen
controller.admissionWebhooks.patch.networkPolicy.enabled:
  default: false
  why: no NetworkPolicy is rendered
defaultBackend.enabled:
  default: false
  why: no default backend is deployed; point extraArgs default-backend-service at one of your own
rbac.scope:
  default: false
  why: the ClusterRole is always rendered; bind it with a RoleBinding to restrict it
dhParam:
  default: ""
  why: Go's TLS has no finite-field Diffie-Hellman
{{- end -}}

{{/* The ignored keys the values change, one "key: why" a line. */}}
{{- define "ramjet.ignoredSet" -}}
{{- $ignored := fromYaml (include "ramjet.ignored" .) -}}
{{- range $path := keys $ignored | sortAlpha -}}
{{- $v := $.Values -}}
{{- $found := true -}}
{{- range $k := splitList "." $path -}}
{{- if and $found (kindIs "map" $v) (hasKey $v $k) -}}
{{- $v = index $v $k -}}
{{- else -}}
{{- $found = false -}}
{{- end -}}
{{- end -}}
{{- $entry := index $ignored $path -}}
{{- if and $found (ne (toYaml $v) (toYaml $entry.default)) }}
{{ $path }}: {{ $entry.why }}
{{- end -}}
{{- end -}}
{{- end -}}
