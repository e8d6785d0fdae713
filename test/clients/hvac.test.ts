// The hvac conformance suite (test/clients/hvac/test_*.py) against the shared launcher. Every
// Python test becomes a vitest test of its own, named after it, failing with the Python
// traceback; the modules run as separate processes, a few at a time.
import { readdirSync } from 'node:fs';
import { beforeAll, describe, inject, it } from 'vitest';
import { expectPassed, HVAC_DIR, listTests, runModule, type Result } from './hvac/suite';

const PARALLEL = 3;
const coffer = inject('coffer');
const hsm = inject('cofferHsm');
const cloudKms = inject('cloudKms');
const plugins = inject('clientPlugins');
const drPair = inject('drPair');
const target = {
  ...coffer,
  extra: {
    COFFER_HELPER_URL: inject('clientHelper'),
    OIDC_ISSUER: inject('oidcIssuer'),
    AWS_EMULATOR: inject('awsEmulator'),
    // The launcher's SoftHSM2 token, for pkcs11 managed keys.
    HSM_LIBRARY: hsm.library,
    HSM_TOKEN_LABEL: hsm.tokenLabel,
    HSM_PIN: hsm.pin,
    // The cloud KMS emulators' control APIs, for cloud managed keys (each module registers its own
    // AWS tenant, Azure tenant and vault, and Google project).
    AWS_KMS_EMULATOR: cloudKms.aws,
    AZURE_EMULATOR: cloudKms.azure,
    GCP_KMS_EMULATOR: cloudKms.gcp,
    // The launcher's plugin directory and the sha256 of the plugins built into it.
    PLUGIN_DIR: plugins.dir,
    TOTP_SHA256: plugins.sha256.totp,
    USERPASS_SHA256: plugins.sha256.userpass,
    MISBEHAVE_SHA256: plugins.sha256.misbehave,
    // test_dr's own two launchers.
    DR_PRIMARY_ADDR: drPair.primary.url,
    DR_PRIMARY_TOKEN: drPair.primary.rootToken,
    DR_PRIMARY_RECOVERY_KEYS: drPair.primary.recoveryKeys.join(','),
    DR_SECONDARY_ADDR: drPair.secondary.url,
    DR_SECONDARY_TOKEN: drPair.secondary.rootToken,
  },
};

const modules = readdirSync(HVAC_DIR)
  .filter((f) => /^test_\w+\.py$/.test(f))
  .map((f) => f.slice(0, -3))
  .sort();

/** Runs every module, at most PARALLEL at once; each module's results as soon as it finishes. */
function runAll(): Map<string, Promise<Result[]>> {
  const queue = [...modules];
  const settle = new Map<string, (r: Result[]) => void>();
  const runs = new Map(modules.map((m) => [m, new Promise<Result[]>((resolve) => settle.set(m, resolve))]));
  const worker = async () => {
    for (let m = queue.shift(); m; m = queue.shift()) settle.get(m)!(await runModule(m, target));
  };
  for (let i = 0; i < PARALLEL; i++) void worker();
  return runs;
}

let runs: Map<string, Promise<Result[]>>;
beforeAll(() => {
  runs = runAll();
});

for (const module of modules) {
  describe(`hvac ${module}`, () => {
    for (const id of listTests(module)) {
      it(id.slice(module.length + 1), async () => expectPassed(await runs.get(module)!, id), 600_000);
    }
  });
}
