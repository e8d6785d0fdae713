// The pkcs11 backend: the HSM key behind the on-premises bridge (hsm-bridge/, PKCS#11 over
// mutual TLS), reached only through the deployment's binding (env.HSM_BRIDGE). Every request
// names the key the way the entry does (library stanza, slot or token label, PIN, label or id);
// the bridge signs digests (DigestInfo for PKCS#1 v1.5, PSS parameters, ECDSA as DER).

import { fromBase64, toBase64 } from '../crypto/encoding';
import type { HashName } from '../crypto/transit/hashes';
import { ManagedKeyError, ManagedKeyMissing, type BackendDeps, type ManagedKey, type ManagedKeyEntry, type Pkcs11Config, type PublicKeyInfo, type SignOptions } from './types';
import { textWithin } from '../framework/deadline';

/** CKM_* values of the mechanism families. */
const CKM_RSA_PKCS = 0x0001;
const CKM_RSA_PKCS_PSS = 0x000d;
const CKM_RSA_PKCS_OAEP = 0x0009;
const CKM_ECDSA = 0x1041;
const EC_MECHANISMS = new Set([CKM_ECDSA, 0x1042, 0x1043, 0x1044, 0x1045, 0x1046]);

/** How long one bridge call may take; generating an RSA 4096 key in a slow HSM takes longer. */
const CALL_TIMEOUT_MS = 15_000;
const GENERATE_TIMEOUT_MS = 120_000;

const hex = (n: number): string => `0x${n.toString(16).padStart(4, '0')}`;
const CURVES: Record<string, PublicKeyInfo['curve']> = { 'P-256': 'P-256', 'P-384': 'P-384', 'P-521': 'P-521', P256: 'P-256', P384: 'P-384', P521: 'P-521' };

interface BridgeKey {
  key_type: 'rsa' | 'ec';
  key_bits: number;
  curve: string | null;
  public_key: string | null;
}

/** Options of the backend beyond the entry: the seal never generates over an existing object. */
export interface Pkcs11Options {
  /** generate() replaces a key with the same label or id (default true: callers checked allow_replace_key). */
  replaceOnGenerate?: boolean;
}

export function pkcs11Backend(entry: ManagedKeyEntry, deps: BackendDeps, options: Pkcs11Options = {}): ManagedKey {
  if (entry.type !== 'pkcs11') throw new Error(`pkcs11 backend given a ${entry.type} key`);
  const config = entry.config;
  const bridge = deps.hsmBridge;
  if (!bridge || !deps.hsmBridgeUrl) {
    throw new ManagedKeyError(400, 'no HSM bridge is bound to this deployment (HSM_BRIDGE and HSM_BRIDGE_URL; see hsm-bridge/README.md)');
  }
  const base = deps.hsmBridgeUrl.replace(/\/+$/, '');
  // A bearer secret goes along when configured (a bridge behind Workers VPC has no client certificate to check).
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(deps.hsmBridgeToken ? { authorization: `Bearer ${deps.hsmBridgeToken}` } : {}) };
  const ec = EC_MECHANISMS.has(config.mechanism) || (config.curve !== '' && config.key_bits === 0);

  /** One bridge call with the key's reference; the bridge's refusals become ManagedKeyErrors. */
  async function call<T>(route: string, body: Record<string, unknown>): Promise<T> {
    let res: Response;
    let text: string;
    try {
      // A deadline, so that a bridge that hangs cannot hold requests (and the write orders they run in) forever.
      const ms = route === '/v1/key/generate' ? GENERATE_TIMEOUT_MS : CALL_TIMEOUT_MS;
      ({ res, text } = await textWithin(ms, (signal) => bridge!.fetch(`${base}${route}`, { method: 'POST', headers, body: JSON.stringify({ ...keyRef(config), ...body }), signal })));
    } catch (e) {
      throw new ManagedKeyError(502, `the HSM bridge cannot be reached: ${e instanceof Error ? e.message : String(e)}`);
    }
    let answer: { error?: string; code?: string } & Record<string, unknown> = {};
    try {
      answer = text ? (JSON.parse(text) as typeof answer) : {};
    } catch {
      throw new ManagedKeyError(502, `the HSM bridge answered ${res.status} with something that is not JSON`);
    }
    if (res.ok) return answer as T;
    const why = `HSM bridge: ${answer.error ?? `status ${res.status}`}${answer.code ? ` (${answer.code})` : ''}`;
    if (res.status === 404 && (answer.code === 'key_not_found' || answer.code === 'public_key_not_found')) throw new ManagedKeyMissing(why);
    throw new ManagedKeyError(res.status >= 500 ? 502 : 400, why);
  }

  const info = (k: BridgeKey): PublicKeyInfo => {
    if (!k.public_key) throw new ManagedKeyError(400, 'the HSM holds no public key for this key (no public key object, no modulus)');
    return k.key_type === 'rsa' ? { pem: k.public_key, keyType: 'rsa', bits: k.key_bits } : { pem: k.public_key, keyType: 'ec', curve: CURVES[k.curve ?? ''] };
  };
  const signMechanism = (opts: SignOptions) => (ec ? CKM_ECDSA : opts.pss ? CKM_RSA_PKCS_PSS : CKM_RSA_PKCS);
  const signBody = (digest: Uint8Array, opts: SignOptions) => ({
    mechanism: hex(signMechanism(opts)),
    hash: opts.hash,
    digest: toBase64(digest),
    ...(opts.pss && opts.saltLength !== undefined ? { salt_length: opts.saltLength } : {}),
  });
  const bytes = (b64: unknown, what: string): Uint8Array => {
    const out = typeof b64 === 'string' ? fromBase64(b64) : null;
    if (!out) throw new ManagedKeyError(502, `the HSM bridge answered without a valid ${what}`);
    return out;
  };

  return {
    publicKey: async () => info(await call<BridgeKey>('/v1/key', {})),
    generate: async () =>
      info(
        await call<BridgeKey>('/v1/key/generate', {
          key_type: ec ? 'ec' : 'rsa',
          ...(ec ? { curve: config.curve } : { key_bits: config.key_bits }),
          // The caller checked allow_replace_key (./guard) before asking for a key over an old one.
          replace: options.replaceOnGenerate ?? true,
        }),
      ),
    sign: async (digest, opts) => bytes((await call<{ signature?: string }>('/v1/sign', signBody(digest, opts))).signature, 'signature'),
    verify: async (digest, signature, opts) => (await call<{ valid?: boolean }>('/v1/verify', { ...signBody(digest, opts), signature: toBase64(signature) })).valid === true,
    encrypt: async (plaintext, opts: { hash: HashName }) =>
      bytes((await call<{ ciphertext?: string }>('/v1/encrypt', { mechanism: hex(CKM_RSA_PKCS_OAEP), hash: opts.hash, plaintext: toBase64(plaintext) })).ciphertext, 'ciphertext'),
    decrypt: async (ciphertext, opts: { hash: HashName }) =>
      bytes((await call<{ plaintext?: string }>('/v1/decrypt', { mechanism: hex(CKM_RSA_PKCS_OAEP), hash: opts.hash, ciphertext: toBase64(ciphertext) })).plaintext, 'plaintext'),
  };
}

/** The fields of the entry that name the key at the bridge (the PIN travels only over mutual TLS). */
function keyRef(c: Pkcs11Config): Record<string, unknown> {
  return {
    library: c.library,
    ...(c.slot !== '' ? { slot: c.slot } : { token_label: c.token_label }),
    pin: c.pin,
    ...(c.key_label ? { key_label: c.key_label } : {}),
    ...(c.key_id ? { key_id: c.key_id } : {}),
    force_rw_session: c.force_rw_session,
    max_parallel: c.max_parallel,
  };
}
