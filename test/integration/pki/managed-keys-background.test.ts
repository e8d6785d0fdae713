// PKI managed keys where no HTTP request is involved: the engine run through the real pipeline
// (dispatch) over in-memory storage, with managed keys resolved from entries held here and the
// real HSM bridge. Covers a server without managed keys, and the periodic CRL rebuild, which is
// not told the mount's allowed_managed_keys: it signs with keys that have any_mount, and for
// others fails loudly (lastError, a log line) without touching the CRLs or the pending rebuild,
// which the next CRL read then does.
import { env } from 'cloudflare:test';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import * as x509 from '../../../src/crypto/pki/x509';
import type { AuthContext, Backend, LogicalResponse, WireOperation } from '../../../src/framework/backend';
import { CofferError } from '../../../src/framework/errors';
import { MemoryStorage, StorageTransaction } from '../../../src/framework/storage';
import { managedKeyAccess, type ManagedKeyAccess } from '../../../src/managed-keys/access';
import type { ManagedKeyEntry } from '../../../src/managed-keys/types';
import { dispatch, type Authorizer } from '../../../src/pipeline/dispatch';
import { pkiBackend } from '../../../src/engines/pki';
import { loadCrlState } from '../../../src/engines/pki/crl-store';
import { loadPending } from '../../../src/engines/pki/revoked-store';

const run = Math.random().toString(36).slice(2, 8);

function entry(name: string, anyMount: boolean): ManagedKeyEntry {
  return {
    uuid: crypto.randomUUID(),
    name,
    type: 'pkcs11',
    allowGenerateKey: true,
    allowReplaceKey: false,
    allowStoreKey: false,
    anyMount,
    usages: ['sign', 'verify'],
    config: {
      library: inject('hsmBridgeLibrary'),
      slot: '',
      token_label: inject('hsmBridgeTokenLabel'),
      pin: inject('hsmBridgePin'),
      key_label: `pki-bg-${run}-${name}`,
      key_id: '',
      mechanism: 0x1041,
      curve: 'P256',
      key_bits: 0,
      force_rw_session: false,
      max_parallel: 1,
    },
  };
}

const entries = new Map<string, ManagedKeyEntry>();
const access: ManagedKeyAccess = managedKeyAccess(
  async (ref) => [...entries.values()].find((e) => (ref.id !== undefined ? e.uuid === ref.id : e.name === ref.name)) ?? null,
  { fetch, hsmBridge: env.HSM_BRIDGE, hsmBridgeUrl: env.HSM_BRIDGE_URL },
);

const root: AuthContext = { accessor: 'a', policies: ['root'], root: true, displayName: 'root', entityId: '', tokenType: 'service', boundCidrs: [] };
const allowAll: Authorizer = { authorize: () => ({ sudo: true }), grantsCreateAndUpdate: () => true };

/** A PKI mount over memory storage, allowed to use `allowed`. */
function pki(backend: Backend, allowed: string[]) {
  const storage = new MemoryStorage();
  const mount = {
    mountPoint: 'pki/',
    mountType: 'pki',
    mountAccessor: 'pki_1',
    mountConfig: { defaultLeaseTTL: 3600, maxLeaseTTL: 86400 * 365 },
    mountOptions: {},
    mountAllowedManagedKeys: allowed,
  };
  const call = async (operation: WireOperation, path: string, data: Record<string, unknown> = {}): Promise<{ status: number; response?: LogicalResponse; errors?: string[] }> => {
    try {
      const wire = { id: 'req', operation, path: `pki/${path}`, data, auth: root, clientIP: '127.0.0.1', headers: {}, wrapTTL: 0 };
      const response = await dispatch(backend, wire, mount, new StorageTransaction(storage), allowAll);
      return { status: response.raw?.status ?? 200, response };
    } catch (e) {
      if (e instanceof CofferError) return { status: e.status, errors: e.errors };
      throw e;
    }
  };
  const ok = async (operation: WireOperation, path: string, data: Record<string, unknown> = {}) => {
    const r = await call(operation, path, data);
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${JSON.stringify(r.errors)}`);
    return r.response!;
  };
  const crl = async (): Promise<Uint8Array> => (await ok('read', 'crl')).raw!.body as Uint8Array;
  return { storage, call, ok, crl };
}

/** A root on the managed key `name`, a leaf it issued and revoked, and the CRL from before the revocation. */
async function revokedUnder(name: string, anyMount: boolean) {
  const e = entry(name, anyMount);
  entries.set(name, e);
  const m = pki(pkiBackend({ managedKeys: access }), anyMount ? [] : [name]);
  const rootPem = (await m.ok('write', 'root/generate/kms', { managed_key_name: name, common_name: name, ttl: '24h' })).data!.certificate as string;
  await m.ok('write', 'roles/leaf', { allow_any_name: true, key_type: 'ec', ttl: '1h' });
  const serial = (await m.ok('write', 'issue/leaf', { common_name: 'leaf' })).data!.serial_number as string;
  const before = await m.crl();
  await m.ok('write', 'revoke', { serial_number: serial });
  return { m, rootPem, serial, before };
}

const serials = (der: Uint8Array) => new x509.X509Crl(der).entries.map((e) => e.serialNumber.toLowerCase());
const hex = (serial: string) => serial.replace(/:/g, '');

describe('a server without managed keys', () => {
  it('refuses kms after the argument checks', async () => {
    const m = pki(pkiBackend(), ['x']);
    for (const path of ['root/generate/kms', 'intermediate/generate/kms', 'keys/generate/kms']) {
      expect(await m.call('write', path, { common_name: 'x' })).toEqual({ status: 400, errors: ['missing argument managed_key_name or managed_key_id'] });
      expect(await m.call('write', path, { common_name: 'x', managed_key_name: 'x' })).toEqual({ status: 400, errors: ['managed keys are not available on this server'] });
    }
  });
});

describe('the periodic CRL rebuild', () => {
  const errors: string[] = [];
  const consoleError = console.error;
  // The background failure is logged: captured here instead of cluttering the output.
  beforeAll(() => {
    console.error = (...args: unknown[]) => void errors.push(args.join(' '));
  });
  afterAll(() => {
    console.error = consoleError;
  });

  it('signs with a key that has any_mount', async () => {
    const { m, rootPem, serial, before } = await revokedUnder('bg-any', true);
    expect(serials(before)).not.toContain(hex(serial));
    await pkiBackend({ managedKeys: access }).periodic!(m.storage, Date.now());
    expect((await loadCrlState(m.storage)).lastError).toBe('');
    expect((await loadPending(m.storage)).complete).toBe(false);
    const built = new x509.X509Crl(await m.crl());
    expect(built.entries.map((e) => e.serialNumber.toLowerCase())).toContain(hex(serial));
    expect(await built.verify({ publicKey: new x509.X509Certificate(rootPem).publicKey })).toBe(true);
  });

  it("signs with a key the mount allows by name: the host passes the mount's allowed_managed_keys", async () => {
    const { m, rootPem, serial } = await revokedUnder('bg-told', false);
    await pkiBackend({ managedKeys: access }).periodic!(m.storage, Date.now(), { mountAllowedManagedKeys: ['bg-told'] });
    expect((await loadCrlState(m.storage)).lastError).toBe('');
    expect((await loadPending(m.storage)).complete).toBe(false);
    const built = new x509.X509Crl(await m.crl());
    expect(built.entries.map((e) => e.serialNumber.toLowerCase())).toContain(hex(serial));
    expect(await built.verify({ publicKey: new x509.X509Certificate(rootPem).publicKey })).toBe(true);
  });

  it('fails loudly for a key allowed by name when the host does not say what the mount allows, keeping the CRL and the pending rebuild; the next read rebuilds', async () => {
    const { m, rootPem, serial, before } = await revokedUnder('bg-named', false);
    const stateBefore = await loadCrlState(m.storage);
    errors.length = 0;
    await pkiBackend({ managedKeys: access }).periodic!(m.storage, Date.now());

    const state = await loadCrlState(m.storage);
    expect(state.lastError).toMatch(/^unable to sign with the managed key of PKI key [0-9a-f-]{36} in background work: managed key "bg-named" is not allowed on this mount/);
    expect(errors).toEqual([expect.stringContaining(state.lastError)]);
    expect({ ...state, lastError: '' }).toEqual({ ...stateBefore, lastError: '' });
    expect((await loadPending(m.storage)).complete).toBe(true);

    // A CRL read has the mount's allowed_managed_keys: it signs the pending CRL.
    const read = await m.crl();
    expect(read).not.toEqual(before);
    expect(serials(read)).toContain(hex(serial));
    expect(await new x509.X509Crl(read).verify({ publicKey: new x509.X509Certificate(rootPem).publicKey })).toBe(true);
    expect((await loadPending(m.storage)).complete).toBe(false);
  });
});
