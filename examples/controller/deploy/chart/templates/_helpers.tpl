{{/* The namespace every namespaced object goes in (ingress-nginx's namespaceOverride). */}}
{{- define "ramjet.namespace" -}}
{{- default .Release.Namespace .Values.namespaceOverride -}}
{{- end -}}

{{/* The chart's name as ingress-nginx's values examples include it (the
pods' app.kubernetes.io/name), so a copied affinity or
topologySpreadConstraints renders and selects the controller's pods. */}}
{{- define "ingress-nginx.name" -}}
ramjet
{{- end -}}

{{/* The labels that select the controller's pods. */}}
{{- define "ramjet.selectorLabels" -}}
app.kubernetes.io/name: ramjet
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Every object's labels: the selector's, commonLabels and controller.labels. */}}
{{- define "ramjet.labels" -}}
{{ include "ramjet.selectorLabels" . }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- with .Values.controller.labels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Labels of the certificate Jobs' objects: not the controller's
selector, so no controller Service ever picks a Job's pod. */}}
{{- define "ramjet.admissionLabels" -}}
app.kubernetes.io/name: ramjet-admission
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: admission-webhook
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- with .Values.controller.admissionWebhooks.patch.labels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "ramjet.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default .Release.Name .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The Secret kube-webhook-certgen writes (cert, key, ca), the
ValidatingWebhookConfiguration it patches, and the Jobs' service account. */}}
{{- define "ramjet.admission.fullname" -}}
{{ .Release.Name }}-{{ .Values.controller.admissionWebhooks.name }}
{{- end -}}

{{- define "ramjet.admission.serviceAccountName" -}}
{{- if .Values.controller.admissionWebhooks.patch.serviceAccount.create -}}
{{- default (include "ramjet.admission.fullname" .) .Values.controller.admissionWebhooks.patch.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.controller.admissionWebhooks.patch.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* kube-webhook-certgen's image, as ingress-nginx's chart builds it. */}}
{{- define "ramjet.admission.image" -}}
{{- with (merge (deepCopy .Values.controller.admissionWebhooks.patch.image) .Values.global.image) -}}
{{ if .repository }}{{ .repository }}{{ else }}{{ .registry }}/{{ .image }}{{ end }}:{{ .tag }}{{ if .digest }}@{{ .digest }}{{ end }}
{{- end -}}
{{- end -}}

{{/* An nginx time of milliseconds (600, 10m, 1m30s, 1m30, 1500ms) in
whole seconds, rounded up, as the controller reads one; "" for a value it
refuses (one with a space, two words to nginx; y or M, which nginx takes
only in seconds). */}}
{{- define "ramjet.seconds" -}}
{{- $v := toString . | trim -}}
{{- if regexMatch "^[0-9]{1,9}$" $v -}}
{{- with int64 $v }}{{ . }}{{ end -}}
{{- else if regexMatch "^([0-9]{1,9}(ms|s|m|h|d|w))+([0-9]{1,9})?$" $v -}}
{{- $units := dict "ms" 1 "s" 1000 "m" 60000 "h" 3600000 "d" 86400000 "w" 604800000 -}}
{{- $ms := 0 -}}
{{- range $part := regexFindAll "[0-9]+(ms|s|m|h|d|w)" $v -1 -}}
{{- $n := regexFind "^[0-9]+" $part -}}
{{- $ms = add $ms (mul (int64 $n) (get $units (trimPrefix $n $part))) -}}
{{- end -}}
{{- with regexFind "[0-9]+$" $v }}{{ $ms = add $ms (mul (int64 .) 1000) }}{{ end -}}
{{- with $ms }}{{ div (add . 999) 1000 }}{{ end -}}
{{- end -}}
{{- end -}}

{{/* The seconds a stopping controller may take: its drain
(--shutdown-grace-period, from extraArgs where ingress-nginx's users set
it, else shutdownGracePeriod) and then the ConfigMap's
worker-shutdown-timeout for requests in flight (ingress-nginx's 240 s when
unset or refused, as the controller keeps it). As "drain timeout". */}}
{{- define "ramjet.stopSeconds" -}}
{{- $c := .Values.controller -}}
{{- $drain := int64 $c.shutdownGracePeriod -}}
{{- if hasKey ($c.extraArgs | default dict) "shutdown-grace-period" -}}
{{- with include "ramjet.seconds" (index $c.extraArgs "shutdown-grace-period") }}{{ $drain = int64 . }}{{ end -}}
{{- end -}}
{{- $timeout := 240 -}}
{{- if hasKey ($c.config | default dict) "worker-shutdown-timeout" -}}
{{- with include "ramjet.seconds" (tpl (toString (index $c.config "worker-shutdown-timeout")) $) }}{{ $timeout = int64 . }}{{ end -}}
{{- end -}}
{{ $drain }} {{ $timeout }}
{{- end -}}

{{/* The port name of a tcp:/udp: entry. */}}
{{- define "ramjet.streamPortName" -}}
{{ if .prefix }}{{ .prefix }}-{{ end }}{{ .port }}-{{ .proto }}
{{- end -}}

{{/* A tcp:/udp: key on a port the controller listens on itself fails the
render: the controller refuses the entry, and the Service's port for it
would reach the controller's own listener. */}}
{{- define "ramjet.streamPortsFree" -}}
{{- $c := .Values.controller -}}
{{- $own := dict (toString (int $c.containerPort.http)) "controller.containerPort.http" (toString (int $c.containerPort.https)) "controller.containerPort.https" (toString (int $c.metrics.port)) "controller.metrics.port" -}}
{{- if $c.admissionWebhooks.enabled }}{{ $_ := set $own (toString (int $c.admissionWebhooks.port)) "controller.admissionWebhooks.port" }}{{ end -}}
{{- range $proto := list "tcp" "udp" -}}
{{- range $port, $_ := index $.Values $proto -}}
{{- with get $own (toString (int $port)) -}}
{{- fail (printf "%s.%s: port %s is the controller's own (%s); choose another port for the service, or move %s" $proto $port $port . .) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The controller's arguments: ingress-nginx's flags where ramjet has them. */}}
{{- define "ramjet.args" -}}
{{- $ns := include "ramjet.namespace" . -}}
{{- /* Empty: the flag's default, as ingress-nginx's chart leaves it out. */}}
{{- if .Values.controller.ingressClass }}
- --ingress-class={{ .Values.controller.ingressClass }}
{{- end }}
- --controller-class={{ .Values.controller.ingressClassResource.controllerValue }}
{{- if and .Values.controller.publishService.enabled .Values.controller.service.enabled }}
{{- if .Values.controller.service.external.enabled }}
- --publish-service={{ default (printf "%s/%s" $ns .Release.Name) .Values.controller.publishService.pathOverride }}
{{- else if .Values.controller.service.internal.enabled }}
{{- /* As ingress-nginx's chart: the path, overridden or not, plus -internal. */}}
- --publish-service={{ default (printf "%s/%s" $ns .Release.Name) .Values.controller.publishService.pathOverride }}-internal
{{- end }}
{{- end }}
- --election-id={{ default (printf "%s-leader" .Release.Name) .Values.controller.electionID }}
- --http-addr=:{{ .Values.controller.containerPort.http }}
- --https-addr=:{{ .Values.controller.containerPort.https }}
{{- /* Gateway listeners name the ports clients reach: the Service's. */}}
- --gateway-http-port={{ .Values.controller.service.ports.http }}
- --gateway-https-port={{ .Values.controller.service.ports.https }}
- --debug-addr=:{{ .Values.controller.metrics.port }}
- --enable-metrics={{ .Values.controller.metrics.enabled }}
- --shutdown-grace-period={{ .Values.controller.shutdownGracePeriod }}
- --configmap={{ default $ns .Values.controller.configMapNamespace }}/{{ .Release.Name }}-controller
{{- if .Values.tcp }}
- --tcp-services-configmap={{ default $ns .Values.controller.tcp.configMapNamespace }}/{{ .Release.Name }}-tcp
{{- end }}
{{- if .Values.udp }}
- --udp-services-configmap={{ default $ns .Values.controller.udp.configMapNamespace }}/{{ .Release.Name }}-udp
{{- end }}
{{- if .Values.controller.scope.enabled }}
- --watch-namespace={{ default $ns .Values.controller.scope.namespace }}
{{- end }}
{{- if .Values.controller.admissionWebhooks.enabled }}
- --validating-webhook=:{{ .Values.controller.admissionWebhooks.port }}
- --validating-webhook-certificate={{ .Values.controller.admissionWebhooks.certificate }}
- --validating-webhook-key={{ .Values.controller.admissionWebhooks.key }}
{{- end }}
{{- if ne .Values.controller.healthCheckPath "/healthz" }}
- --health-check-path={{ .Values.controller.healthCheckPath }}
{{- end }}
{{- if .Values.controller.watchIngressWithoutClass }}
- --watch-ingress-without-class=true
{{- end }}
{{- /* As ingress-nginx's chart, on a hostNetwork install, or on hostPort,
which stands for it here: status advertises the nodes' InternalIPs. */}}
{{- if and .Values.controller.reportNodeInternalIp (or .Values.controller.hostNetwork .Values.controller.hostPort.enabled) }}
- --report-node-internal-ip-address=true
{{- end }}
{{- /* ingress-nginx's flags that move a listener, which its users set
beside the port value (its values.yaml: "if this port is changed, change
healthz-port: in extraArgs: accordingly"): the value alone moves it here,
and the controller refuses the flag. One that agrees is left out. */}}
{{- $c := .Values.controller }}
{{- $moved := dict "http-port" (list $c.containerPort.http "controller.containerPort.http" "listens on") "https-port" (list $c.containerPort.https "controller.containerPort.https" "listens on") "healthz-port" (list $c.metrics.port "controller.metrics.port" "serves /healthz and /metrics on") }}
{{- range $key, $value := .Values.controller.extraArgs }}
{{- $port := get $moved $key }}
{{- if and $port (ne (toString $value) (toString (index $port 0))) }}
{{- fail (printf "controller.extraArgs.%s: %v: the controller %s %s (%v); set that to %v and remove the flag" $key $value (index $port 2) (index $port 1) (index $port 0) $value) }}
{{- else if $port }}
{{- /* The chart's port already. */}}
{{- /* A key with an empty value is --key, others (false too) --key=value, as in ingress-nginx's chart. */}}
{{- else if eq ($value | quote | len) 2 }}
- --{{ $key }}
{{- else }}
- --{{ $key }}={{ $value }}
{{- end }}
{{- end }}
{{- end -}}

{{/* Each pod selector of controller.affinity and
controller.topologySpreadConstraints that names app.kubernetes.io/name
ingress-nginx, a line each: the label of ingress-nginx's pods, as a
values file written for an older ingress-nginx chart names them, and
never of ramjet's. */}}
{{- define "ramjet.foreignSelectors" -}}
{{- $sels := list }}
{{- with .Values.controller.affinity }}
{{- $aff := fromYaml (tpl (toYaml .) $) }}
{{- range $kind := list "podAffinity" "podAntiAffinity" }}
{{- $a := index $aff $kind | default dict }}
{{- range $i, $term := index $a "requiredDuringSchedulingIgnoredDuringExecution" | default list }}
{{- $sels = append $sels (list (printf "controller.affinity.%s.requiredDuringSchedulingIgnoredDuringExecution[%d]" $kind $i) $term.labelSelector) }}
{{- end }}
{{- range $i, $term := index $a "preferredDuringSchedulingIgnoredDuringExecution" | default list }}
{{- $sels = append $sels (list (printf "controller.affinity.%s.preferredDuringSchedulingIgnoredDuringExecution[%d]" $kind $i) ($term.podAffinityTerm | default dict).labelSelector) }}
{{- end }}
{{- end }}
{{- end }}
{{- with .Values.controller.topologySpreadConstraints }}
{{- range $i, $c := (fromYaml (tpl (toYaml (dict "l" .)) $)).l }}
{{- $sels = append $sels (list (printf "controller.topologySpreadConstraints[%d]" $i) $c.labelSelector) }}
{{- end }}
{{- end }}
{{- range $s := $sels }}
{{- $sel := index $s 1 | default dict }}
{{- $foreign := eq (toString (index ($sel.matchLabels | default dict) "app.kubernetes.io/name")) "ingress-nginx" }}
{{- range $e := $sel.matchExpressions | default list }}
{{- if and (eq (toString $e.key) "app.kubernetes.io/name") (eq (toString $e.operator) "In") (has "ingress-nginx" ($e.values | default list)) }}
{{- $foreign = true }}
{{- end }}
{{- end }}
{{- if $foreign }}
{{ index $s 0 }}
{{- end }}
{{- end }}
{{- end -}}
