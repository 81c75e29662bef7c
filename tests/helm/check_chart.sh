#!/usr/bin/env bash
# The Helm chart (helm/restack) lints, renders, and renders into valid Kubernetes manifests,
# offline: Helm 4 and kubernetes-models from scripts/setup.sh (scripts/setup.d/helm.sh).
#   tests/helm/check_chart.sh REPO_ROOT DEPS_DIR
set -euo pipefail
repo="${1:?repo root}"
deps="${2:?deps dir}"
helm="$deps/helm/bin/helm"
modules="$deps/helm/node_modules"
chart="$repo/helm/restack"
validator="$repo/tests/helm/validate_manifests.js"

[[ -x "$helm" ]] || { echo "FAIL: $helm is missing; run scripts/setup.sh (scripts/setup.d/helm.sh)"; exit 1; }
[[ -d "$modules/kubernetes-models" ]] ||
  { echo "FAIL: kubernetes-models is missing from $modules; run scripts/setup.sh"; exit 1; }
command -v node >/dev/null || { echo "FAIL: node is not on PATH; run scripts/setup.sh"; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
pass() { echo "ok      $1"; passed=$((passed + 1)); }
fail() { echo "FAILED  $1"; [[ -n "${2:-}" ]] && sed 's/^/        /' "$2"; failed=$((failed + 1)); }

# Runs a check whose command must succeed; its output is shown only on failure.
expect_success() {
  local name="$1"
  shift
  if "$@" >"$work/out" 2>&1; then pass "$name"; else fail "$name" "$work/out"; fi
}
# Runs a command that must fail with `message` in its output (a refused bad configuration).
expect_refusal() {
  local name="$1" message="$2"
  shift 2
  if "$@" >"$work/out" 2>&1; then
    fail "$name (was accepted)" "$work/out"
  elif grep -qF -- "$message" "$work/out"; then
    pass "$name"
  else
    fail "$name (refused without saying '$message')" "$work/out"
  fi
}

minimal=(--set config.kafka.brokers=kafka-bootstrap:9092)
expect_success "helm lint --strict, minimal values" "$helm" lint --strict "$chart" "${minimal[@]}"
expect_success "helm lint --strict, every option on (ci/test-values.yaml)" \
  "$helm" lint --strict "$chart" -f "$chart/ci/test-values.yaml"

# render_and_validate NAME "KINDS THAT MUST BE THERE" HELM-ARGS...
render_and_validate() {
  local name="$1" kinds="$2"
  shift 2
  if "$helm" template restack "$chart" --namespace crash "$@" >"$work/rendered.yaml" 2>"$work/out"; then
    # shellcheck disable=SC2086  # kinds is a word list
    expect_success "$name: manifests valid" node "$validator" "$modules" "$work/rendered.yaml" $kinds
  else
    fail "$name: helm template" "$work/out"
  fi
}
render_and_validate "minimal values" "StatefulSet ConfigMap Service PodDisruptionBudget ServiceAccount" \
  "${minimal[@]}"
render_and_validate "every option on" "PodDisruptionBudget ServiceMonitor" -f "$chart/ci/test-values.yaml"
render_and_validate "brokers from envOverrides, one replica, no PDB" "ServiceMonitor" \
  --set envOverrides.KAFKA__BROKERS=b:9092 --set replicaCount=1 --set podDisruptionBudget.enabled=false \
  --set staticMembership=false --set metrics.podAnnotations=false --set serviceMonitor.enabled=true

expect_refusal "no brokers" "config.kafka.brokers is required" "$helm" template restack "$chart"
expect_refusal "store outside the volume" "must lie under persistence.mountPath" \
  "$helm" template restack "$chart" "${minimal[@]}" --set config.store.path=/data/store
expect_refusal "zero worker threads" "/config/worker/threads" \
  "$helm" template restack "$chart" "${minimal[@]}" --set config.worker.threads=0
expect_refusal "zero upload retry deadline" "/config/uploads/retry_deadline_s" \
  "$helm" template restack "$chart" "${minimal[@]}" --set config.uploads.retry_deadline_s=0
expect_refusal "misspelt config key" "brokerz" \
  "$helm" template restack "$chart" "${minimal[@]}" --set config.kafka.brokerz=x
expect_refusal "the removed worker.upload_root" "upload_root" \
  "$helm" template restack "$chart" "${minimal[@]}" --set config.worker.upload_root=/data
expect_refusal "allow_plain_http not a boolean" "/config/uploads/allow_plain_http" \
  "$helm" template restack "$chart" "${minimal[@]}" --set-string config.uploads.allow_plain_http=yes
expect_refusal "unknown log format" "/config/observability/log_format" \
  "$helm" template restack "$chart" "${minimal[@]}" --set config.observability.log_format=xml
expect_refusal "decompression ratio below 2" "/config/limits/max_decompression_ratio" \
  "$helm" template restack "$chart" "${minimal[@]}" --set config.limits.max_decompression_ratio=1
expect_refusal "source maps over 4 GiB" "/config/limits/max_sourcemap_bytes" \
  "$helm" template restack "$chart" "${minimal[@]}" --set config.limits.max_sourcemap_bytes=8589934592
expect_refusal "protected kafka property" "config.kafka.properties.acks cannot be set" \
  "$helm" template restack "$chart" "${minimal[@]}" --set config.kafka.properties.acks=1
expect_refusal "protected kafka property from envOverrides" "kafka.properties.enable.auto.commit" \
  "$helm" template restack "$chart" "${minimal[@]}" --set envOverrides.KAFKA__PROPERTIES__ENABLE_AUTO_COMMIT=true
expect_refusal "outputs larger than message.max.bytes" "config.limits.max_output_bytes (990000)" \
  "$helm" template restack "$chart" "${minimal[@]}" --set config.limits.max_output_bytes=990000
expect_success "larger outputs with a raised message.max.bytes" "$helm" template restack "$chart" "${minimal[@]}" \
  --set config.limits.max_output_bytes=1900000 --set-string 'config.kafka.properties.message\.max\.bytes=2000000'

echo "chart: $passed passed, $failed failed"
((failed == 0))
