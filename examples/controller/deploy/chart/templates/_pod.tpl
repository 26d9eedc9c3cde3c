{{/* The controller's pod, shared by the Deployment and the DaemonSet;
the context is the chart's with "workload" naming which one renders it. */}}
{{- define "ramjet.podTemplate" -}}
metadata:
  labels:
    {{- include "ramjet.labels" . | nindent 4 }}
    {{- /* ingress-nginx's pods carry it, and its documented selectors
    name it; not in the selector, which a Deployment cannot change. */}}
    app.kubernetes.io/component: controller
    {{- /* With kind Both, which workload owns the pod, for the
    PodDisruptionBudget to select the Deployment's alone. */}}
    {{- if eq .Values.controller.kind "Both" }}
    ramjet.dev/workload: {{ .workload }}
    {{- end }}
    {{- with .Values.controller.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- if or .Values.controller.metrics.enabled .Values.controller.podAnnotations }}
  {{- /* One mapping: podAnnotations may name the Prometheus keys too
  (ingress-nginx's monitoring guide sets them there), and a key written
  twice fails the install. The values file's win. */}}
  {{- $annotations := dict }}
  {{- if .Values.controller.metrics.enabled }}
  {{- $_ := set $annotations "prometheus.io/scrape" "true" }}
  {{- $_ := set $annotations "prometheus.io/port" (toString .Values.controller.metrics.port) }}
  {{- end }}
  {{- range $key, $value := .Values.controller.podAnnotations }}
  {{- $_ := set $annotations $key $value }}
  {{- end }}
  annotations:
    {{- range $key, $value := $annotations }}
    {{ $key }}: {{ $value | quote }}
    {{- end }}
  {{- end }}
spec:
  serviceAccountName: {{ include "ramjet.serviceAccountName" . }}
  automountServiceAccountToken: {{ .Values.serviceAccount.automountServiceAccountToken }}
  # The values file's own; 0: the drain, plus the time requests in flight
  # get (worker-shutdown-timeout), plus a margin.
  {{- $stop := splitList " " (include "ramjet.stopSeconds" .) }}
  terminationGracePeriodSeconds: {{ .Values.controller.terminationGracePeriodSeconds | default (add (index $stop 0) (index $stop 1) 15) }}
  {{- with .Values.imagePullSecrets }}
  imagePullSecrets: {{ toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.controller.priorityClassName }}
  priorityClassName: {{ . | quote }}
  {{- end }}
  {{- with .Values.controller.runtimeClassName }}
  runtimeClassName: {{ . | quote }}
  {{- end }}
  {{- with .Values.controller.dnsConfig }}
  dnsConfig: {{ toYaml . | nindent 4 }}
  {{- end }}
  {{- if .Values.controller.hostNetwork }}
  hostNetwork: true
  {{- end }}
  dnsPolicy: {{ .Values.controller.dnsPolicy }}
  {{- with .Values.controller.hostAliases }}
  hostAliases: {{ tpl (toYaml .) $ | nindent 4 }}
  {{- end }}
  {{- with .Values.controller.hostname }}
  hostname: {{ toYaml . }}
  {{- end }}
  {{- if .Values.controller.shareProcessNamespace }}
  shareProcessNamespace: true
  {{- end }}
  {{- $bindLow := eq (include "ramjet.bindLow" .) "true" }}
  securityContext:
    {{- if .Values.controller.podSecurityContext }}
    {{- toYaml .Values.controller.podSecurityContext | nindent 4 }}
    {{- else if $bindLow }}
    runAsNonRoot: false
    runAsUser: 0
    runAsGroup: 0
    seccompProfile:
      type: RuntimeDefault
    {{- else }}
    runAsNonRoot: true
    runAsUser: 65532
    runAsGroup: 65532
    seccompProfile:
      type: RuntimeDefault
    {{- end }}
    {{- /* The controller has no capabilities: a port below 1024, its own
    or a tcp:/udp: one, is bound only with the unprivileged range lowered
    to it, a sysctl of the pod's network namespace (on the host network,
    ramjet.bindLow instead). */}}
    {{- $sysctls := deepCopy (.Values.controller.sysctls | default dict) }}
    {{- $low := int (include "ramjet.lowestPort" .) }}
    {{- if and (lt $low 1024) (not .Values.controller.hostNetwork) (not (hasKey $sysctls "net.ipv4.ip_unprivileged_port_start")) }}
    {{- $_ := set $sysctls "net.ipv4.ip_unprivileged_port_start" $low }}
    {{- end }}
    {{- with $sysctls }}
    sysctls:
      {{- range $name, $value := . }}
      - name: {{ $name | quote }}
        value: {{ $value | quote }}
      {{- end }}
    {{- end }}
  {{- with .Values.controller.nodeSelector }}
  nodeSelector: {{ toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.controller.tolerations }}
  tolerations: {{ toYaml . | nindent 4 }}
  {{- end }}
  affinity:
    {{- if .Values.controller.affinity }}
    {{- tpl (toYaml .Values.controller.affinity) $ | nindent 4 }}
    {{- else }}
    # Replicas on different nodes where possible, so one node going
    # away takes one replica.
    podAntiAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 100
          podAffinityTerm:
            topologyKey: kubernetes.io/hostname
            labelSelector:
              matchLabels:
                {{- include "ramjet.selectorLabels" . | nindent 16 }}
    {{- end }}
  {{- with .Values.controller.topologySpreadConstraints }}
  topologySpreadConstraints: {{ tpl (toYaml .) $ | nindent 4 }}
  {{- end }}
  {{- with .Values.controller.extraInitContainers }}
  initContainers: {{ tpl (toYaml .) $ | nindent 4 }}
  {{- end }}
  containers:
    - name: {{ .Values.controller.containerName }}
      image: {{ .Values.image.repository }}:{{ .Values.image.tag }}
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      args: {{ include "ramjet.args" . | nindent 8 }}
      env:
        - name: POD_NAME
          valueFrom:
            fieldRef:
              fieldPath: metadata.name
        - name: POD_NAMESPACE
          valueFrom:
            fieldRef:
              fieldPath: metadata.namespace
        {{- with .Values.controller.extraEnvs }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- include "ramjet.streamPortsFree" . }}
      ports:
        - name: http
          containerPort: {{ .Values.controller.containerPort.http }}
          protocol: TCP
          {{- if .Values.controller.hostPort.enabled }}
          hostPort: {{ .Values.controller.hostPort.ports.http | default 80 }}
          {{- end }}
        - name: https
          containerPort: {{ .Values.controller.containerPort.https }}
          protocol: TCP
          {{- if .Values.controller.hostPort.enabled }}
          hostPort: {{ .Values.controller.hostPort.ports.https | default 443 }}
          {{- end }}
        # /healthz, /readyz, /metrics and /debug/*.
        - name: {{ .Values.controller.metrics.portName }}
          containerPort: {{ .Values.controller.metrics.port }}
          protocol: TCP
        {{- if .Values.controller.admissionWebhooks.enabled }}
        - name: webhook
          containerPort: {{ .Values.controller.admissionWebhooks.port }}
          protocol: TCP
        {{- end }}
        {{- range $port, $_ := .Values.tcp }}
        - name: {{ include "ramjet.streamPortName" (dict "prefix" $.Values.portNamePrefix "port" $port "proto" "tcp") }}
          containerPort: {{ $port }}
          protocol: TCP
          {{- if $.Values.controller.hostPort.enabled }}
          hostPort: {{ $port }}
          {{- end }}
        {{- end }}
        {{- range $port, $_ := .Values.udp }}
        - name: {{ include "ramjet.streamPortName" (dict "prefix" $.Values.portNamePrefix "port" $port "proto" "udp") }}
          containerPort: {{ $port }}
          protocol: UDP
          {{- if $.Values.controller.hostPort.enabled }}
          hostPort: {{ $port }}
          {{- end }}
        {{- end }}
      lifecycle:
        preStop:
          exec:
            command: ["/controller", "-wait-shutdown"]
      readinessProbe:
        httpGet:
          path: /readyz
          port: {{ .Values.controller.metrics.portName }}
        periodSeconds: 2
        failureThreshold: 2
      livenessProbe:
        httpGet:
          path: {{ .Values.controller.healthCheckPath }}
          port: {{ .Values.controller.metrics.portName }}
        periodSeconds: 10
        failureThreshold: 3
      {{- with .Values.controller.resources }}
      resources: {{ toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.controller.resizePolicy }}
      resizePolicy: {{ toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- if .Values.controller.containerSecurityContext }}
        {{- toYaml .Values.controller.containerSecurityContext | nindent 8 }}
        {{- else }}
        runAsNonRoot: {{ not $bindLow }}
        {{- if $bindLow }}
        runAsUser: 0
        runAsGroup: 0
        {{- end }}
        allowPrivilegeEscalation: false
        readOnlyRootFilesystem: true
        capabilities:
          drop: ["ALL"]
          {{- if $bindLow }}
          add: ["NET_BIND_SERVICE"]
          {{- end }}
        seccompProfile:
          type: RuntimeDefault
        {{- end }}
      {{- if or .Values.controller.admissionWebhooks.enabled .Values.controller.extraVolumeMounts }}
      volumeMounts:
        {{- if .Values.controller.admissionWebhooks.enabled }}
        - name: webhook-cert
          mountPath: /usr/local/certificates/
          readOnly: true
        {{- end }}
        {{- with .Values.controller.extraVolumeMounts }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- end }}
    {{- with .Values.controller.extraContainers }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- if or .Values.controller.admissionWebhooks.enabled .Values.controller.extraVolumes }}
  volumes:
    {{- if .Values.controller.admissionWebhooks.enabled }}
    - name: webhook-cert
      secret:
        secretName: {{ include "ramjet.admission.fullname" . }}
    {{- end }}
    {{- with .Values.controller.extraVolumes }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- end }}
{{- end -}}


{{/* The lowest port the controller binds: its HTTP and HTTPS ports and
the tcp: and udp: ones. */}}
{{- define "ramjet.lowestPort" -}}
{{- $low := 1024 }}
{{- range $port := list .Values.controller.containerPort.http .Values.controller.containerPort.https }}
{{- if lt (int $port) $low }}{{ $low = int $port }}{{ end }}
{{- end }}
{{- range $port, $_ := merge (dict) (.Values.tcp | default dict) (.Values.udp | default dict) }}
{{- if lt (int $port) $low }}{{ $low = int $port }}{{ end }}
{{- end }}
{{- $low -}}
{{- end -}}

{{/* "true" when the controller binds a port below 1024 on the host
network, where the pod may set no net.* sysctl: it does so as
ingress-nginx's nginx does, with NET_BIND_SERVICE, which only a root
process holds without a file capability (the image sets none), and as
its only capability. */}}
{{- define "ramjet.bindLow" -}}
{{- and .Values.controller.hostNetwork (lt (int (include "ramjet.lowestPort" .)) 1024) -}}
{{- end -}}
