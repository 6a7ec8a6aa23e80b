// Validates docker/k8s/*.yaml with no cluster (issue 14), in three layers:
//
//  1. Schema: each document against the Kubernetes OpenAPI schema of its
//     kind, through kubernetes-models' JSON Schema validators (Kubernetes
//     1.34 API: types, required fields, enums, formats such as quantities).
//  2. Unknown fields: those validators, like the API server without
//     strict decoding, let a misspelt field through; TypeScript's excess
//     property check against kubernetes-models' interfaces does not. Each
//     document becomes a typed object literal, and `tsc --noEmit` must
//     accept the file.
//  3. This project's own rules: the token Secret is readable by the uid
//     the container runs as; the memory limit covers the policy's worst
//     case (the formula of deployment.yaml); no ClientIP affinity; probes,
//     imagePullPolicy, PodDisruptionBudget, NetworkPolicy are there and
//     select the pods; the ConfigMap's policy loads in the real binary.
//
// Each layer is also shown to refuse a broken manifest, so that it cannot
// pass by checking nothing.
//
// usage: node validate.mjs K8S_DIR MCP_SANDBOX_BINARY
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";

import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { Secret } from "kubernetes-models/v1/Secret";
import { Service } from "kubernetes-models/v1/Service";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { Ingress } from "kubernetes-models/networking.k8s.io/v1/Ingress";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicy";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1/PodDisruptionBudget";

const here = path.dirname(fileURLToPath(import.meta.url));
const [dir, bin] = process.argv.slice(2);

// apiVersion/kind -> model class, and the module and interface for tsc
const KINDS = {
  "v1/ConfigMap": [ConfigMap, "kubernetes-models/v1/ConfigMap", "IConfigMap"],
  "v1/Secret": [Secret, "kubernetes-models/v1/Secret", "ISecret"],
  "v1/Service": [Service, "kubernetes-models/v1/Service", "IService"],
  "apps/v1/Deployment": [Deployment, "kubernetes-models/apps/v1/Deployment", "IDeployment"],
  "networking.k8s.io/v1/Ingress": [Ingress, "kubernetes-models/networking.k8s.io/v1/Ingress", "IIngress"],
  "networking.k8s.io/v1/NetworkPolicy": [NetworkPolicy, "kubernetes-models/networking.k8s.io/v1/NetworkPolicy", "INetworkPolicy"],
  "policy/v1/PodDisruptionBudget": [PodDisruptionBudget, "kubernetes-models/policy/v1/PodDisruptionBudget", "IPodDisruptionBudget"],
};

let failed = 0;
function check(name, ok, detail = "") {
  console.log(`${ok ? "ok  " : "FAIL"} ${name}${ok ? "" : ": " + detail}`);
  if (!ok) failed++;
}

function load(dirPath) {
  const docs = [];
  for (const f of fs.readdirSync(dirPath).filter((n) => n.endsWith(".yaml")).sort()) {
    for (const d of YAML.parseAllDocuments(fs.readFileSync(path.join(dirPath, f), "utf8"))) {
      if (d.errors.length) throw new Error(`${f}: ${d.errors[0].message}`);
      docs.push({ file: f, obj: d.toJSON() });
    }
  }
  return docs;
}

function kindOf(obj) {
  return `${obj.apiVersion}/${obj.kind}`;
}

// Layer 1: "" when valid, else the validator's message.
function schemaError(obj) {
  const k = KINDS[kindOf(obj)];
  if (!k) return `no schema known for ${kindOf(obj)}`;
  try {
    new k[0](obj).validate();
    return "";
  } catch (e) {
    return e.message;
  }
}

// Layer 2: tsc's diagnostics for these documents as typed literals.
function excessErrors(docs) {
  // inside this folder, so that its node_modules resolve
  const work = fs.mkdtempSync(path.join(here, ".tsc-"));
  const lines = [];
  const imports = new Set();
  docs.forEach(({ obj }, i) => {
    const [, mod, iface] = KINDS[kindOf(obj)];
    imports.add(`import type { ${iface} } from "${mod}";`);
    lines.push(`export const doc${i}: ${iface} = ${JSON.stringify(obj, null, 1)};`);
  });
  fs.writeFileSync(path.join(work, "manifests.ts"), [...imports, ...lines].join("\n") + "\n");
  fs.writeFileSync(path.join(work, "tsconfig.json"), JSON.stringify({
    compilerOptions: { noEmit: true, strict: true, skipLibCheck: true, types: [],
      module: "nodenext", moduleResolution: "nodenext", target: "es2022" },
    files: ["manifests.ts"] }));
  const r = spawnSync(process.execPath, [path.join(here, "node_modules/typescript/bin/tsc"),
    "-p", work], { cwd: work, encoding: "utf8", timeout: 120000 });
  fs.rmSync(work, { recursive: true, force: true });
  return r.status === 0 ? "" : (r.stdout + r.stderr).trim();
}

const docs = load(dir);
const byKind = (k) => docs.filter((d) => d.obj.kind === k).map((d) => d.obj);
check("every document has a known kind", docs.every((d) => KINDS[kindOf(d.obj)]),
  docs.map((d) => kindOf(d.obj)).join(", "));

// ---- 1 and 2: the manifests as they are
for (const { file, obj } of docs) {
  const e = schemaError(obj);
  check(`schema: ${file} ${obj.kind}/${obj.metadata?.name}`, e === "", e);
}
const tsErr = excessErrors(docs);
check("no unknown field (tsc)", tsErr === "", tsErr);

// ...and each layer refuses what is wrong
const dep0 = byKind("Deployment")[0];
const broken = structuredClone(dep0);
broken.spec.template.spec.containers[0].imagePullPolicy = "Sometimes";
check("schema refuses a bad enum", /imagePullPolicy must be equal to one of/.test(schemaError(broken)),
  schemaError(broken));
const broken2 = structuredClone(dep0);
broken2.spec.template.spec.containers[0].resources.limits.memory = "eight gigs";
check("schema refuses a bad quantity", schemaError(broken2) !== "", "accepted");
const typo = structuredClone(dep0);
typo.spec.template.spec.securityContext.fsGroupp = 10001;
check("tsc refuses a misspelt field", /fsGroupp/.test(excessErrors([{ obj: typo }])),
  "accepted");

// ---- 3: this project's rules
const dep = dep0.spec.template.spec;
const ctr = dep.containers[0];
const podSc = dep.securityContext;
const tokenVol = dep.volumes.find((v) => v.secret);
const mode = tokenVol.secret.defaultMode;
// readable by runAsUser: through the group (fsGroup) or the owner (never:
// secret files are root's), so group read and fsGroup == runAsGroup
check("token Secret readable by the container's uid",
  podSc.runAsUser !== 0 && podSc.fsGroup === podSc.runAsGroup && (mode & 0o040) !== 0 &&
  (mode & 0o007) === 0, `fsGroup ${podSc.fsGroup}, mode ${mode?.toString(8)}`);
const args = ctr.args;
const mountOf = (p) => ctr.volumeMounts.find((m) => p.startsWith(m.mountPath + "/"));
const tokenPath = args[args.indexOf("--token-file") + 1];
check("--token-file is in the Secret's mount", mountOf(tokenPath)?.name === tokenVol.name, tokenPath);
const cfgPath = args[args.indexOf("--config") + 1];
const cfgVol = dep.volumes.find((v) => v.name === mountOf(cfgPath)?.name);
check("--config is in the ConfigMap's mount", cfgVol?.configMap != null, cfgPath);
const cm = byKind("ConfigMap").find((c) => c.metadata.name === cfgVol?.configMap?.name);
const policyText = cm?.data?.[path.basename(cfgPath)];
check("the ConfigMap holds the policy file", typeof policyText === "string");

// the policy loads in the real server, and its worst case fits the limit
const pfile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "mcp-k8s-")), "policy.json");
fs.writeFileSync(pfile, policyText);
const pr = spawnSync(bin, ["--config", pfile, "--print-config"], { encoding: "utf8",
  env: { PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" } });
check("the pod's policy loads in mcp-sandbox", pr.status === 0, pr.stderr);
const lim = JSON.parse(pr.stdout || "{}").limits ?? {};
const MIB = 1024 * 1024;
const BODIES_MIB = (256 + 16) * 4; // (MCP_HTTP_MAX_CONNECTIONS + slack) x MCP_MAX_MSG
const SERVER_MIB = 64;
const SESSIONS = 64; // MCP_HTTP_MAX_SESSIONS, each with a fresh workspace
const slots = lim.max_sandboxes + lim.warm_python + lim.pool_size;
const workspaces = SESSIONS + 1 + lim.max_sandboxes; // + stateless, + skill copies
const worst = lim.memory_mb * lim.processes * slots + lim.tmp_mb * slots +
  lim.workspace_mb * workspaces + BODIES_MIB + SERVER_MIB;
const quantity = (q) => {
  const m = /^([0-9]+)(Ki|Mi|Gi|Ti)?$/.exec(q);
  return m ? Number(m[1]) * { Ki: 1 / 1024, Mi: 1, Gi: 1024, Ti: 1024 * 1024 }[m[2] ?? "Mi"] : NaN;
};
const limitMib = quantity(ctr.resources.limits.memory);
check(`memory limit ${limitMib} MiB >= worst case ${worst} MiB ` +
  `(${lim.memory_mb} x ${lim.processes} x ${slots} + ${lim.tmp_mb} x ${slots} + ` +
  `${lim.workspace_mb} x ${workspaces} + ${BODIES_MIB} + ${SERVER_MIB})`,
  lim.max_sandboxes > 0 && limitMib >= worst, "the limit is below the worst case");
const formulaLine = fs.readFileSync(path.join(dir, "deployment.yaml"), "utf8")
  .match(/= ([0-9]+) MiB,/);
// every limit the formula reads is set by the pod's policy, not defaulted
for (const k of ["memory_mb", "processes", "max_sandboxes", "warm_python", "pool_size", "tmp_mb", "workspace_mb"])
  check(`the pod's policy sets ${k}`, JSON.parse(policyText).limits?.[k] !== undefined);
check("deployment.yaml states the same figure", formulaLine?.[1] === String(worst), formulaLine?.[0]);
void MIB;

for (const probe of ["startupProbe", "readinessProbe", "livenessProbe"])
  check(`${probe} on /healthz`, ctr[probe]?.httpGet?.path === "/healthz");
check("imagePullPolicy set, and not with a moving tag",
  ctr.imagePullPolicy === "IfNotPresent" && !/:latest$|^[^:]+$/.test(ctr.image), ctr.image);
const svc = byKind("Service")[0];
check("no ClientIP affinity", (svc.spec.sessionAffinity ?? "None") === "None", svc.spec.sessionAffinity);
const labels = dep0.spec.template.metadata.labels;
const selects = (sel) => Object.entries(sel.matchLabels).every(([k, v]) => labels[k] === v);
const pdb = byKind("PodDisruptionBudget")[0];
check("PodDisruptionBudget selects the pods, keeps one", pdb && selects(pdb.spec.selector) &&
  pdb.spec.minAvailable >= 1 && pdb.spec.minAvailable < dep0.spec.replicas);
const np = byKind("NetworkPolicy")[0];
check("NetworkPolicy selects the pods, no egress, ingress on the HTTP port only",
  np && selects(np.spec.podSelector) && np.spec.policyTypes.includes("Egress") &&
  np.spec.egress.length === 0 && np.spec.ingress.every((r) => r.ports.every((p) => p.port === 8080)));
const ing = byKind("Ingress")[0];
check("ingress hashes on the principal (the bearer token)",
  ing?.metadata.annotations["nginx.ingress.kubernetes.io/upstream-hash-by"] === "$http_authorization");
check("ingress terminates TLS and routes /mcp to the Service",
  ing.spec.tls?.length > 0 && ing.spec.rules[0].http.paths[0].path === "/mcp" &&
  ing.spec.rules[0].http.paths[0].backend.service.name === svc.metadata.name);

console.log(failed ? `k8s: ${failed} failed` : `k8s: all passed (${docs.length} documents)`);
process.exit(failed ? 1 : 0);
