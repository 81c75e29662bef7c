{{/* Names and labels shared by every manifest of the chart. */}}

{{- define "restack.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* <release>-restack, or just <release> when the release name already says restack. */}}
{{- define "restack.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "restack.selectorLabels" -}}
app.kubernetes.io/name: {{ include "restack.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "restack.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "restack.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: worker
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "restack.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "restack.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Where the pieces are mounted inside the pod. */}}
{{- define "restack.configDir" -}}/etc/restack{{- end }}
{{- define "restack.caDir" -}}/etc/restack/kafka-ca{{- end }}
{{- define "restack.clientCertDir" -}}/etc/restack/kafka-client{{- end }}

{{/*
The worker's restack.yaml: .Values.config, plus the TLS file locations of the mounted Secrets
(kafkaAuth.tls) merged into kafka.properties. Fails early on settings the worker would reject
only after the pods started.
*/}}
{{- define "restack.config" -}}
{{- $config := deepCopy .Values.config }}
{{- if and (not $config.kafka.brokers) (not (hasKey .Values.envOverrides "KAFKA__BROKERS")) }}
{{- fail "config.kafka.brokers is required: set it to the Kafka bootstrap list, e.g. --set config.kafka.brokers=kafka-bootstrap:9092 (or envOverrides.KAFKA__BROKERS)" }}
{{- end }}
{{- if not (hasPrefix (printf "%s/" (trimSuffix "/" .Values.persistence.mountPath)) $config.store.path) }}
{{- fail (printf "config.store.path (%s) must lie under persistence.mountPath (%s), or the store would not be on the pod's volume" $config.store.path .Values.persistence.mountPath) }}
{{- end }}
{{- $properties := default dict $config.kafka.properties }}
{{- with .Values.kafkaAuth.tls }}
{{- if .caSecret }}
{{- $_ := set $properties "ssl.ca.location" (printf "%s/%s" (include "restack.caDir" $) .caKey) }}
{{- end }}
{{- if .clientCertSecret }}
{{- $_ := set $properties "ssl.certificate.location" (printf "%s/tls.crt" (include "restack.clientCertDir" $)) }}
{{- $_ := set $properties "ssl.key.location" (printf "%s/tls.key" (include "restack.clientCertDir" $)) }}
{{- end }}
{{- end }}
{{- /* The properties the worker refuses (config/config.cc kProtectedProperties). */}}
{{- $protected := list "bootstrap.servers" "metadata.broker.list" "group.id" "partition.assignment.strategy" "session.timeout.ms" "heartbeat.interval.ms" "enable.auto.commit" "auto.commit.enable" "enable.auto.offset.store" "offset.store.method" "auto.offset.reset" "enable.partition.eof" "isolation.level" "enable.idempotence" "acks" "request.required.acks" "transactional.id" "partitioner" "queuing.strategy" }}
{{- range $name, $_ := $properties }}
{{- if has $name $protected }}
{{- fail (printf "config.kafka.properties.%s cannot be set: Restack's guarantees depend on its own value (docs/operations.md, \"Protected properties\")" $name) }}
{{- end }}
{{- end }}
{{- range $key, $_ := .Values.envOverrides }}
{{- if hasPrefix "KAFKA__PROPERTIES__" $key }}
{{- $name := $key | trimPrefix "KAFKA__PROPERTIES__" | lower | replace "_" "." }}
{{- if has $name $protected }}
{{- fail (printf "envOverrides.%s sets kafka.properties.%s, which cannot be set: Restack's guarantees depend on its own value (docs/operations.md, \"Protected properties\")" $key $name) }}
{{- end }}
{{- end }}
{{- end }}
{{- $messageMax := int64 (default 1000000 (get $properties "message.max.bytes")) }}
{{- if gt (add (int64 $config.limits.max_output_bytes) 16384) $messageMax }}
{{- fail (printf "config.limits.max_output_bytes (%d) plus 16384 bytes for keys and headers exceeds the producer's message.max.bytes (%d): lower it or raise config.kafka.properties.\"message.max.bytes\" (docs/operations.md, \"Message sizes\")" (int64 $config.limits.max_output_bytes) $messageMax) }}
{{- end }}
{{- $_ := set $config.kafka "properties" $properties }}
{{- toYaml $config }}
{{- end }}
