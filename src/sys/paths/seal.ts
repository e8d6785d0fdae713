// sys/init, seal-status, unseal, seal, health, leader, key-status, rotate, generate-root, decode-token.

import { decodeToken } from '../../core/barrier/seal-state';
import type { PathDef } from '../../framework/backend';
import { badRequest } from '../../framework/errors';
import type { FieldSchemas } from '../../framework/fields';
import type { SystemServices } from '../context';

const HEALTH_CODES: Record<string, number> = {
  activecode: 200,
  standbycode: 429,
  drsecondarycode: 472,
  performancestandbycode: 473,
  haunhealthycode: 474,
  removedcode: 530,
  sealedcode: 503,
  uninitcode: 501,
};

function healthCode(data: Record<string, unknown>, name: string): number {
  const raw = data[name];
  if (raw === undefined || raw === '') return HEALTH_CODES[name];
  const n = typeof raw === 'number' ? raw : Number(String(raw));
  if (!Number.isInteger(n) || n < 100 || n > 599) throw badRequest(`unable to parse ${name} code: ${JSON.stringify(raw)}`);
  return n;
}

const initFields: FieldSchemas = {
  recovery_shares: { type: 'int', description: 'Number of recovery key shares to create.' },
  recovery_threshold: { type: 'int', description: 'Number of recovery key shares needed to unseal or generate a root token.' },
  secret_shares: { type: 'int', description: 'Accepted as recovery_shares when that is absent (the vault CLI sends it).' },
  secret_threshold: { type: 'int', description: 'Accepted as recovery_threshold when that is absent.' },
  stored_shares: { type: 'int', description: 'Legacy; ignored.' },
  pgp_keys: { type: 'any', description: 'Not supported.' },
  recovery_pgp_keys: { type: 'any', description: 'Not supported.' },
  root_token_pgp_key: { type: 'string', description: 'Not supported.' },
};

export function sealPaths(s: SystemServices): PathDef[] {
  return [
    {
      pattern: 'init',
      fields: initFields,
      summary: 'Initialise the cluster: creates the root key, the recovery key shares and a root token.',
      operations: {
        read: async () => ({ raw: { status: 200, body: { initialized: s.core.isInitialized() } } }),
        update: async (_req, f) => ({
          raw: {
            status: 200,
            body: await s.core.init({
              recovery_shares: f.get<number>('recovery_shares'),
              recovery_threshold: f.get<number>('recovery_threshold'),
              secret_shares: f.get<number>('secret_shares'),
              secret_threshold: f.get<number>('secret_threshold'),
              pgp_keys: f.get('pgp_keys'),
              recovery_pgp_keys: f.get('recovery_pgp_keys'),
              root_token_pgp_key: f.get<string>('root_token_pgp_key'),
            }),
          },
        }),
      },
    },
    {
      pattern: 'seal-status',
      summary: 'Seal state, recovery key threshold and unseal progress.',
      operations: { read: async () => ({ raw: { status: 200, body: await s.core.sealStatus() } }) },
    },
    {
      pattern: 'unseal',
      fields: {
        key: { type: 'string', description: 'A recovery key share, hex or base64.' },
        reset: { type: 'bool', description: 'Discard the shares given so far.' },
        migrate: { type: 'bool', description: 'Seal migration; not applicable.' },
      },
      summary: 'Submit a recovery key share to unseal after sys/seal.',
      operations: {
        update: async (_req, f) => ({
          raw: { status: 200, body: await s.core.unseal({ key: f.get<string>('key'), reset: f.get<boolean>('reset') }) },
        }),
      },
    },
    {
      pattern: 'seal',
      summary: 'Seal the cluster: every request answers 503 until unsealed with recovery key shares.',
      operations: {
        update: async () => {
          await s.sealCluster();
          return null;
        },
      },
    },
    {
      pattern: 'health',
      fields: Object.fromEntries([
        ...Object.keys(HEALTH_CODES).map((k) => [k, { type: 'any', description: `Status code to answer with (default ${HEALTH_CODES[k]}).` }]),
        ['standbyok', { type: 'bool', description: 'Answer the active code on a standby.' }],
        ['perfstandbyok', { type: 'bool', description: 'Answer the active code on a performance standby.' }],
      ]) as FieldSchemas,
      summary: 'Health of the node; the status code encodes initialised/sealed/active.',
      operations: {
        read: async (req) => {
          const codes = Object.fromEntries(Object.keys(HEALTH_CODES).map((k) => [k, healthCode(req.data, k)]));
          const h = await s.core.health();
          const dr = (await s.replication.state()).mode;
          const status = !h.initialized ? codes.uninitcode : h.sealed ? codes.sealedcode : dr === 'secondary' ? codes.drsecondarycode : codes.activecode;
          return { raw: { status, body: { ...h.body, replication_dr_mode: dr } } };
        },
      },
    },
    {
      pattern: 'leader',
      summary: 'High-availability status: Coffer has no standbys.',
      operations: {
        read: async () => ({
          raw: {
            status: 200,
            body: {
              ha_enabled: false,
              is_self: false,
              active_time: '0001-01-01T00:00:00Z',
              leader_address: '',
              leader_cluster_address: '',
              performance_standby: false,
              performance_standby_last_remote_wal: 0,
            },
          },
        }),
      },
    },
    {
      pattern: 'key-status',
      summary: 'The active barrier keyring term.',
      operations: { read: async () => ({ data: await s.core.keyStatus() }) },
    },
    {
      pattern: 'rotate',
      summary: 'Add a keyring term; new writes use it, older terms still decrypt.',
      operations: {
        update: async () => {
          await s.core.rotate();
          return null;
        },
      },
    },
    {
      pattern: 'generate-root/attempt',
      fields: {
        otp: { type: 'string', description: 'A 28-character OTP to encode the new root token with; generated when omitted.' },
        pgp_key: { type: 'string', description: 'Not supported.' },
        key: { type: 'string', description: 'A recovery key share authorising the attempt when no sudo token is sent.' },
      },
      summary: 'Start, read or cancel a root token generation attempt.',
      operations: {
        read: async () => ({ raw: { status: 200, body: await s.core.generateRootGet() } }),
        // A token with sudo on this path authorises the attempt (or a recovery key share does).
        update: async (req, f) => ({
          raw: {
            status: 200,
            body: await s.core.generateRootStart(
              { otp: f.get<string>('otp'), pgp_key: f.get<string>('pgp_key'), key: f.get<string>('key') || undefined },
              await s.sudoOn(req.auth, 'sys/generate-root/attempt'),
            ),
          },
        }),
        delete: async (req, f) => {
          await s.core.generateRootCancel(await s.sudoOn(req.auth, 'sys/generate-root/attempt'), f.get<string>('key') || undefined);
          return { raw: { status: 204 } };
        },
      },
    },
    {
      pattern: 'generate-root/update',
      fields: {
        key: { type: 'string', description: 'A recovery key share, hex or base64.' },
        nonce: { type: 'string', description: 'The nonce of the running attempt.' },
      },
      summary: 'Submit a recovery key share to the running root generation attempt.',
      operations: {
        update: async (_req, f) => ({
          raw: { status: 200, body: await s.core.generateRootUpdate({ key: f.get<string>('key'), nonce: f.get<string>('nonce') }) },
        }),
      },
    },
    {
      pattern: 'decode-token',
      fields: {
        encoded_token: { type: 'string', description: 'The encoded token from generate-root.', required: true },
        otp: { type: 'string', description: 'The OTP of the attempt.', required: true },
      },
      summary: 'Decode an OTP-encoded root token.',
      operations: {
        update: async (_req, f) => ({ data: { token: decodeToken(f.get<string>('encoded_token'), f.get<string>('otp')) } }),
      },
    },
  ];
}
