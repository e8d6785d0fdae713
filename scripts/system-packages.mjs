// The one place the tests' Debian packages are installed (`npm test` runs it first; run it alone
// with `node scripts/system-packages.mjs`). Each package is checked by what the tests use, and
// only the missing ones are installed, with one `apt-get update` before.
import { spawnSync } from 'node:child_process';

/** What the tests drive, and how to tell it is there. */
export const SYSTEM_PACKAGES = [
  // Verifies CSRs, certificates, CRLs and OCSP answers; makes CSRs for the client suite.
  { name: 'openssl', present: ['sh', '-c', 'command -v openssl'] },
  // The Python Vault client of the conformance suite (test/clients/hvac), for Debian's python3.
  { name: 'python3-hvac', present: ['/usr/bin/python3', '-c', 'import hvac'] },
  // Prometheus's own Python client: its parser checks sys/metrics' text format independently.
  { name: 'python3-prometheus-client', present: ['/usr/bin/python3', '-c', 'import prometheus_client'] },
  // The PKCS#11 token the HSM bridge's tests run against (test/global/hsm-bridge.ts).
  { name: 'softhsm2', present: ['sh', '-c', 'command -v softhsm2-util && test -e /usr/lib/softhsm/libsofthsm2.so'] },
  // The reference TOTP implementation the TOTP plugin's codes are checked against (test/clients).
  { name: 'oathtool', present: ['sh', '-c', 'command -v oathtool'] },
  // node-gyp's toolchain: the bridge's pkcs11js is a native module built at install.
  { name: 'g++', present: ['sh', '-c', 'command -v g++'] },
  { name: 'make', present: ['sh', '-c', 'command -v make'] },
];

const ok = ([cmd, ...args]) => spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;

export function ensureSystemPackages() {
  const missing = SYSTEM_PACKAGES.filter((p) => !ok(p.present)).map((p) => p.name);
  if (missing.length === 0) return;
  console.log(`Installing Debian packages: ${missing.join(' ')}`);
  const sudo = process.getuid?.() === 0 ? [] : ['sudo'];
  for (const args of [['apt-get', 'update'], ['apt-get', 'install', '-y', '--no-install-recommends', ...missing]]) {
    const [cmd, ...rest] = [...sudo, ...args];
    const r = spawnSync(cmd, rest, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    if (r.status !== 0) process.exit(r.status ?? 1);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  ensureSystemPackages();
  // On a fresh machine the bridge's native module could not be built before the toolchain was
  // here (ensure-deps runs first, as pretest): try again now; it does nothing when up to date.
  const deps = spawnSync(process.execPath, [new URL('./ensure-deps.mjs', import.meta.url).pathname], { stdio: 'inherit' });
  if (deps.status !== 0) process.exit(deps.status ?? 1);
}
