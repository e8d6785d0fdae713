// The cloudbkeyvault (Vault: azurekeyvault) backend: a key in Azure Key Vault, reached with an
// Entra ID client secret (./azure-token) over Key Vault's REST API (./azure-vault). The key's
// latest version is read (GET /keys/<name>) and every operation of this instance goes to that
// version, so a signature always matches the public key the caller was shown.

import { fromBase64Url, toBase64Url } from '../crypto/encoding';
import type { HashName } from '../crypto/transit/hashes';
import { azureTarget, keyUrl } from './azure-endpoints';
import { derToRaw, keyFromBundle, oaepAlgorithm, rawToDer, signAlgorithm, type AzureKey, type KeyBundle } from './azure-jwk';
import { vaultCall, type VaultContext } from './azure-vault';
import { ManagedKeyError, type BackendDeps, type KeyUsage, type ManagedKey, type ManagedKeyEntry, type SignOptions } from './types';

/** Key Vault's key_ops for the entry's usages (a generated key can do only what the entry may). */
const KEY_OPS: Partial<Record<KeyUsage, string>> = { sign: 'sign', verify: 'verify', encrypt: 'encrypt', decrypt: 'decrypt', wrap: 'wrapKey', unwrap: 'unwrapKey' };

interface OperationResult {
  kid?: string;
  value?: string | boolean;
}

export function azureKeyVaultBackend(entry: ManagedKeyEntry, deps: BackendDeps): ManagedKey {
  if (entry.type !== 'cloudbkeyvault') throw new Error(`azurekeyvault backend given a ${entry.type} key`);
  const config = entry.config;
  const target = azureTarget(config, deps.endpoints);
  const ctx: VaultContext = { config, target, fetch: deps.fetch };
  const name = config.key_name;
  let current: AzureKey | null = null;

  const latest = async (): Promise<AzureKey> => (current = await keyFromBundle(await vaultCall<KeyBundle>(ctx, 'read', 'GET', keyUrl(target, name)), name));
  const key = async (): Promise<AzureKey> => current ?? (await latest());

  /** POST /keys/<name>/<version>/<op>; the base64url `value` of the answer. */
  async function operate(k: AzureKey, op: 'sign' | 'encrypt' | 'decrypt', body: Record<string, unknown>): Promise<Uint8Array> {
    const answer = await vaultCall<OperationResult>(ctx, `${op} with`, 'POST', keyUrl(target, name, k.version, op), body);
    const bytes = typeof answer.value === 'string' ? fromBase64Url(answer.value) : null;
    if (!bytes) throw new ManagedKeyError(502, `Azure Key Vault answered the ${op} request for key ${JSON.stringify(name)} without a base64url value`);
    return bytes;
  }

  return {
    publicKey: async () => (await latest()).info,

    async generate() {
      const kty = config.key_type || 'RSA-HSM';
      if (!kty.startsWith('RSA')) throw new ManagedKeyError(400, `generating Azure Key Vault keys of type ${JSON.stringify(kty)} is not supported: use RSA-HSM`);
      const keyOps = entry.usages.map((u) => KEY_OPS[u]).filter((op): op is string => op !== undefined);
      const body = { kty, ...(config.key_bits ? { key_size: Number(config.key_bits) } : {}), ...(keyOps.length ? { key_ops: keyOps } : {}) };
      current = await keyFromBundle(await vaultCall<KeyBundle>(ctx, 'create', 'POST', keyUrl(target, name, undefined, 'create'), body), name);
      return current.info;
    },

    async sign(digest: Uint8Array, opts: SignOptions) {
      const k = await key();
      const alg = signAlgorithm(k.info, digest, opts);
      const signature = await operate(k, 'sign', { alg, value: toBase64Url(digest) });
      return k.info.keyType === 'ec' ? rawToDer(signature, k.info.curve ?? 'P-256') : signature;
    },

    async verify(digest: Uint8Array, signature: Uint8Array, opts: SignOptions) {
      const k = await key();
      const alg = signAlgorithm(k.info, digest, opts);
      const wire = k.info.keyType === 'ec' ? derToRaw(signature, k.info.curve ?? 'P-256') : signature;
      if (!wire) return false; // not a DER ECDSA signature for this curve
      const answer = await vaultCall<OperationResult>(ctx, 'verify with', 'POST', keyUrl(target, name, k.version, 'verify'), { alg, digest: toBase64Url(digest), value: toBase64Url(wire) });
      if (typeof answer.value !== 'boolean') throw new ManagedKeyError(502, `Azure Key Vault answered the verify request for key ${JSON.stringify(name)} without a boolean value`);
      return answer.value;
    },

    async encrypt(plaintext: Uint8Array, opts: { hash: HashName }) {
      const k = await key();
      return operate(k, 'encrypt', { alg: oaepAlgorithm(k.info, opts.hash), value: toBase64Url(plaintext) });
    },

    async decrypt(ciphertext: Uint8Array, opts: { hash: HashName }) {
      const k = await key();
      return operate(k, 'decrypt', { alg: oaepAlgorithm(k.info, opts.hash), value: toBase64Url(ciphertext) });
    },
  };
}
