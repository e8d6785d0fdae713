// A test-only engine that issues leased secrets, so lease lifecycles (renewal, revocation,
// expiry, retries of failing revocations, revocation with the token) are testable without a
// cloud. Mountable only when the Worker has COFFER_TEST_ENGINES=1.

import type { Backend, SecretType } from '../../framework/backend';
import { getJSON, putJSON } from '../../framework/storage';
import { utf8 } from '../../crypto/encoding';

interface Config {
  fail_revokes: number;
}

const creds: SecretType = {
  async revoke(lease, storage) {
    const config = (await getJSON<Config>(storage, 'config')) ?? { fail_revokes: 0 };
    if (config.fail_revokes > 0) {
      await putJSON(storage, 'config', { fail_revokes: config.fail_revokes - 1 });
      throw new Error('simulated revocation failure');
    }
    await storage.put(`revoked/${String(lease.internal.serial)}`, utf8(lease.id));
  },
  async renew(lease, ttl, storage) {
    await storage.put(`renewed/${String(lease.internal.serial)}`, utf8(String(ttl)));
    return ttl;
  },
};

export function testLeasesBackend(): Backend {
  return {
    type: 'coffer-test-leases',
    secretTypes: { creds },
    // Reading a credential issues it (and its lease), as AWS creds reads do.
    writingReadPaths: ['creds/*'],
    paths: [
      {
        pattern: 'creds/(?<name>[\\w-]+)',
        fields: {
          name: { type: 'string', description: 'Name of the credential.' },
          ttl: { type: 'duration', description: 'Lease TTL.' },
          renewable: { type: 'bool', description: 'Whether the lease renews.', default: true },
        },
        summary: 'Issue a leased test credential.',
        operations: {
          read: async (req, f) => {
            const serial = ((await getJSON<number>(req.storage, 'serial')) ?? 0) + 1;
            await putJSON(req.storage, 'serial', serial);
            return {
              data: { name: f.get('name'), serial },
              secret: { type: 'creds', ttl: f.get('ttl'), renewable: f.get('renewable'), internal: { name: f.get('name'), serial } },
            };
          },
        },
      },
      {
        pattern: 'config',
        fields: { fail_revokes: { type: 'int', description: 'Fail this many revocations before succeeding.' } },
        summary: 'Make revocations fail, to exercise retries.',
        operations: {
          update: async (req, f) => {
            await putJSON(req.storage, 'config', { fail_revokes: f.get('fail_revokes') });
            return null;
          },
        },
      },
      {
        pattern: 'mount-context',
        summary: 'What the engine is told about its mount (tests that tuned settings reach engines).',
        operations: {
          read: async (req) => ({ data: { allowed_managed_keys: req.mountAllowedManagedKeys ?? null } }),
        },
      },
      {
        // Deliberately undeclared in writingReadPaths: the host must refuse the write.
        pattern: 'undeclared-write',
        summary: 'A read that writes without saying so (tests the host guard).',
        operations: {
          read: async (req) => {
            await putJSON(req.storage, 'undeclared', true);
            return { data: { wrote: true } };
          },
        },
      },
      {
        pattern: 'revoked',
        summary: 'Serials whose revocation handler completed.',
        operations: {
          read: async (req) => ({ data: { serials: (await req.storage.list('revoked/')).map(Number).sort((a, b) => a - b) } }),
        },
      },
    ],
  };
}
