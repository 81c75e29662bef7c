// Validates the manifests `helm template` rendered against the Kubernetes OpenAPI schemas
// (kubernetes-models; prometheus-operator models for ServiceMonitor), offline, then checks the
// properties Restack relies on: a StatefulSet with a volume claim per pod, probes on the worker's
// HTTP port, a non-root pod, a long grace period, and selectors that really select the pods.
//
//   node validate_manifests.js <node_modules dir> <rendered.yaml> [Kind…]
// Each Kind named after the file must be among the manifests (e.g. PodDisruptionBudget).
// Prints one line per manifest and exits non-zero with every problem listed.
'use strict';
const path = require('path');
const fs = require('fs');
const [modulesDir, renderedFile, ...requiredKinds] = process.argv.slice(2);
const load = (name) => require(path.resolve(modulesDir, name));
const YAML = load('yaml');

const problems = [];
const check = (condition, message) => { if (!condition) problems.push(message); };

// apiVersion + kind -> the model class that knows its schema.
function modelFor(apiVersion, kind) {
  if (apiVersion === 'monitoring.coreos.com/v1') {
    return load(`@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/${kind}`)[kind];
  }
  return load(`kubernetes-models/${apiVersion}/${kind}`)[kind];
}

const documents = YAML.parseAllDocuments(fs.readFileSync(renderedFile, 'utf8'))
  .map((doc) => {
    if (doc.errors.length) problems.push(`YAML error: ${doc.errors[0].message}`);
    return doc.toJSON();
  })
  .filter((doc) => doc && typeof doc === 'object');

const byKind = {};
for (const manifest of documents) {
  const name = `${manifest.kind}/${manifest.metadata && manifest.metadata.name}`;
  let Model;
  try {
    Model = modelFor(manifest.apiVersion, manifest.kind);
  } catch (e) {
    problems.push(`${name}: no schema for ${manifest.apiVersion} ${manifest.kind}`);
    continue;
  }
  try {
    new Model(manifest).validate();
    console.log(`valid   ${manifest.apiVersion} ${name}`);
  } catch (e) {
    problems.push(`${name}: ${e.message}`);
  }
  byKind[manifest.kind] = manifest;
}

for (const kind of requiredKinds) check(byKind[kind], `no ${kind} rendered`);

const matches = (selector, labels) =>
  Object.entries(selector || {}).every(([k, v]) => labels && labels[k] === v);

const sts = byKind.StatefulSet;
check(sts, 'no StatefulSet rendered');
if (sts) {
  const pod = sts.spec.template;
  const container = pod.spec.containers[0];
  // The worker's ConfigMap (the chart may also render the Grafana dashboard's).
  const configMap = documents.find((m) => m.kind === 'ConfigMap' && m.data && m.data['restack.yaml']);
  const restackYaml = configMap && YAML.parse(configMap.data['restack.yaml']);
  const httpPort = restackYaml && restackYaml.observability.http_port;
  check(matches(sts.spec.selector.matchLabels, pod.metadata.labels),
        'StatefulSet selector does not select its own pods');
  const claims = sts.spec.volumeClaimTemplates || [];
  check(claims.length === 1 && claims[0].spec.resources.requests.storage,
        'StatefulSet needs one volume claim template with a size (the RocksDB store)');
  const storeMount = (container.volumeMounts || []).find((m) => claims[0] && m.name === claims[0].metadata.name);
  check(storeMount, 'the store volume claim is not mounted in the container');
  check(storeMount && restackYaml && restackYaml.store.path.startsWith(storeMount.mountPath + '/'),
        `store.path ${restackYaml && restackYaml.store.path} is not on the volume mounted at ${storeMount && storeMount.mountPath}`);
  const port = (container.ports || []).find((p) => p.containerPort === httpPort);
  check(port, `container does not expose observability.http_port ${httpPort}`);
  for (const [probe, path] of [['livenessProbe', '/healthz'], ['readinessProbe', '/readyz'], ['startupProbe', '/healthz']]) {
    const get = container[probe] && container[probe].httpGet;
    check(get && get.path === path && (get.port === port.name || get.port === httpPort),
          `${probe} must GET ${path} on port ${httpPort}`);
  }
  check(pod.spec.securityContext.runAsNonRoot === true && pod.spec.securityContext.runAsUser > 0,
        'pod must run as non-root');
  check(container.securityContext.allowPrivilegeEscalation === false, 'privilege escalation allowed');
  check(pod.spec.terminationGracePeriodSeconds >= 60,
        'terminationGracePeriodSeconds too short for a graceful drain');
  check(JSON.stringify(container.command).includes('--config'), 'worker is not started with --config');
  const configVolume = pod.spec.volumes.find((v) => v.configMap);
  check(configMap && configVolume && configVolume.configMap.name === configMap.metadata.name,
        'the ConfigMap with restack.yaml is not mounted');
  check(pod.metadata.annotations['checksum/config'], 'no config checksum: config changes would not roll pods');
  for (const env of container.env || []) {
    check(/^[A-Z_][A-Z0-9_]*$/.test(env.name), `environment variable name ${env.name} is not portable`);
  }

  const svc = byKind.Service;
  check(svc && svc.spec.clusterIP === 'None', 'Service must be headless');
  check(svc && sts.spec.serviceName === svc.metadata.name, 'StatefulSet.serviceName must name the headless Service');
  check(svc && matches(svc.spec.selector, pod.metadata.labels), 'Service does not select the pods');
  const pdb = byKind.PodDisruptionBudget;
  if (pdb) {
    check(matches(pdb.spec.selector.matchLabels, pod.metadata.labels), 'PodDisruptionBudget does not select the pods');
  }
  const monitor = byKind.ServiceMonitor;
  if (monitor) {
    check(svc && matches(monitor.spec.selector.matchLabels, svc.metadata.labels), 'ServiceMonitor does not select the Service');
    check(monitor.spec.endpoints[0].path === '/metrics' &&
          svc.spec.ports.some((p) => p.name === monitor.spec.endpoints[0].port),
          'ServiceMonitor must scrape /metrics on a named Service port');
  } else {
    check(pod.metadata.annotations['prometheus.io/scrape'] === 'true', 'no Prometheus scrape annotations and no ServiceMonitor');
  }
}

if (problems.length) {
  console.error(`${problems.length} problem(s) in ${renderedFile}:`);
  for (const p of problems) console.error(`  - ${p}`);
  process.exit(1);
}
console.log(`${documents.length} manifests valid`);
