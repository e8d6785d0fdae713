// sign/:name(/:hash_algorithm) and verify/:name(/:hash_algorithm) (reference §6.8, §6.9). Verify
// checks HMACs too: an item carries either a signature or an hmac.

import type { LogicalResponse, PathDef } from '../../../framework/backend';
import { nameRegex } from '../../../framework/backend';
import { AsymmetricError, sign, verify, type SignOptions } from '../../../crypto/transit/asymmetric';
import { ed25519PublicRaw } from '../../../crypto/transit/key-encoding';
import { parseHashName } from '../../../crypto/transit/hashes';
import { fromBase64, toBase64, toBase64Url } from '../../../crypto/encoding';
import { badRequest } from '../../../framework/errors';
import type { FieldData } from '../../../framework/fields';
import { batchItems, eachItem, itemBytes, itemHas, itemInt, itemString, singleItem, type Item } from '../batch';
import { itemCostUs } from '../batch-cost';
import { checkHmac, hmacAlgorithm, HMAC_FIELDS, HMAC_NOT_MANAGED } from './hmac';
import { isRsa, supportsSigning } from '../key-types';
import { signingKey } from '../material';
import { versionPrefix, type KeyPolicy } from '../policy';
import { loadPolicy } from '../store';
import { splitVersioned, usableVersion } from '../versions';
import type { ManagedKeyAccess } from '../../../managed-keys/access';
import { managedUse, type ManagedUse } from '../managed/access';
import { managedSign, managedVerify } from '../managed/sign';

const SINGLE = ['input', 'context', 'key_version', 'prehashed', 'signature_algorithm', 'marshaling_algorithm', 'salt_length', 'signature', 'hmac', 'reference'];

/** Options shared by every item of a request (hash from the path, else the body). */
function signOptions(f: FieldData, p: KeyPolicy): SignOptions {
  const hashName = f.get<string>('urlalgorithm') || f.get<string>('hash_algorithm') || f.get<string>('algorithm') || 'sha2-256';
  const hash = hashName === 'none' ? 'none' : parseHashName(hashName);
  if (!hash) throw badRequest(`invalid hash algorithm "${hashName}"`);
  const marshaling = f.get<string>('marshaling_algorithm') || 'asn1';
  if (marshaling !== 'asn1' && marshaling !== 'jws') throw badRequest(`invalid marshaling type "${marshaling}"`);
  const signatureAlgorithm = f.get<string>('signature_algorithm') || 'pss';
  if (signatureAlgorithm !== 'pss' && signatureAlgorithm !== 'pkcs1v15') throw badRequest(`unsupported signature algorithm "${signatureAlgorithm}"`);
  const salt = f.get<string>('salt_length') || 'auto';
  let saltLength: SignOptions['saltLength'];
  if (salt === 'auto' || salt === 'hash') saltLength = salt;
  else if (/^-?\d+$/.test(salt)) saltLength = parseInt(salt, 10);
  else throw badRequest(`salt length neither 'auto', 'hash', nor an int: ${salt}`);
  const prehashed = f.get<boolean>('prehashed');
  if (hash === 'none' && p.type === 'managed_key') throw badRequest('hash_algorithm=none is not supported for keys of type managed_key');
  if (hash === 'none' && !isRsa(p.type)) throw badRequest('hash_algorithm=none is only supported for RSA keys');
  if (hash === 'none' && !(prehashed && signatureAlgorithm === 'pkcs1v15')) {
    throw badRequest('hash_algorithm=none requires both prehashed=true and signature_algorithm=pkcs1v15');
  }
  if (prehashed && p.type === 'ed25519') throw badRequest('prehashed input is not supported for ed25519 keys');
  return { hash, prehashed, signatureAlgorithm, saltLength, marshaling };
}

const encodeSignature = (sig: Uint8Array, o: SignOptions): string => (o.marshaling === 'jws' ? toBase64Url(sig) : toBase64(sig));

function decodeSignature(s: string, o: SignOptions): Uint8Array {
  const out = o.marshaling === 'jws' ? fromBase64(s.replace(/-/g, '+').replace(/_/g, '/')) : fromBase64(s);
  if (!out) throw badRequest('invalid base64 signature value');
  return out;
}

function checkSigningKey(p: KeyPolicy): void {
  // What a managed_key key can do is its managed key's usages, checked at each use.
  if (!supportsSigning(p.type) && p.type !== 'managed_key') throw badRequest(`key type ${p.type} does not support signing`);
}

/** Asymmetric failures caused by the request's options are 400s. */
async function asymmetric<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof AsymmetricError) throw badRequest(e.message);
    throw e;
  }
}

async function signItem(p: KeyPolicy, o: SignOptions, item: Item, inBatch: boolean, managed: ManagedUse): Promise<Record<string, unknown>> {
  const input = itemBytes(item, 'input');
  if (p.type === 'managed_key') {
    const { version, signature } = await managedSign(managed, p, o, input, itemInt(item, 'key_version'));
    return { signature: versionPrefix(p, version) + encodeSignature(signature, o), key_version: version };
  }
  const { version, entry } = usableVersion(p, itemInt(item, 'key_version'));
  const key = await signingKey(p, entry, itemBytes(item, 'context'));
  if (!key.privateKey) throw badRequest('requested version for signing does not contain a private part');
  const sig = await asymmetric(() => sign(key, input, o));
  const out: Record<string, unknown> = { signature: versionPrefix(p, version) + encodeSignature(sig, o), key_version: version };
  if (p.derived && p.type === 'ed25519') out[inBatch ? 'publickey' : 'public_key'] = toBase64(ed25519PublicRaw(key));
  return out;
}

async function verifySignature(p: KeyPolicy, o: SignOptions, item: Item, managed: ManagedUse): Promise<boolean> {
  const input = itemBytes(item, 'input');
  const { entry, payload } = splitVersioned(p.versionTemplate, p, itemString(item, 'signature'), 'signature');
  if (p.type === 'managed_key') return await asymmetric(() => managedVerify(managed, entry, input, decodeSignature(payload, o), o));
  const key = await signingKey(p, entry, itemBytes(item, 'context'));
  return await asymmetric(() => verify(key, input, decodeSignature(payload, o), o));
}

const SIGN_FIELDS = {
  name: { type: 'string', description: 'Key name', required: true },
  input: { type: 'string', description: 'Base64 input' },
  key_version: { type: 'int', description: 'Key version (0: latest)' },
  hash_algorithm: { type: 'string', description: 'Hash algorithm (default sha2-256)' },
  algorithm: { type: 'string', description: 'Deprecated alias of hash_algorithm' },
  urlalgorithm: { type: 'string', description: 'Hash algorithm, in the path' },
  context: { type: 'string', description: 'Base64 context (derived ed25519 keys)' },
  prehashed: { type: 'bool', description: 'The input is already a digest' },
  signature_algorithm: { type: 'string', description: 'RSA: pss (default) or pkcs1v15' },
  marshaling_algorithm: { type: 'string', description: 'asn1 (default) or jws' },
  salt_length: { type: 'string', description: 'RSA-PSS salt: auto (default), hash or a number of bytes' },
  reference: { type: 'string', description: 'Echoed in batch results' },
  batch_input: { type: 'any', description: 'Items to process in one request' },
} as const;

export function signPaths(budgetMs: number, managedKeys?: ManagedKeyAccess): PathDef[] {
  return [
    {
      pattern: `sign/${nameRegex('name')}(?:/(?<urlalgorithm>[^/]+))?`,
      fields: SIGN_FIELDS,
      summary: 'Sign data with a named key.',
      operations: {
        update: async (req, f): Promise<LogicalResponse> => {
          const p = await loadPolicy(req.storage, f.get<string>('name'));
          if (!p) throw badRequest('signing key not found');
          checkSigningKey(p);
          const o = signOptions(f, p);
          const managed = managedUse(managedKeys, req);
          const items = batchItems(f);
          if (!items) return { data: await signItem(p, o, singleItem(f, SINGLE), false, managed) };
          const cost = { itemUs: itemCostUs(p.type, 'private'), budgetMs };
          return { data: { batch_results: await eachItem(items, (item) => signItem(p, o, item, true, managed), cost) } };
        },
      },
    },
    {
      pattern: `verify/${nameRegex('name')}(?:/(?<urlalgorithm>[^/]+))?`,
      fields: {
        ...SIGN_FIELDS,
        ...HMAC_FIELDS,
        signature: { type: 'string', description: 'Signature to verify' },
        hmac: { type: 'string', description: 'HMAC to verify' },
      },
      summary: 'Verify a signature or an HMAC made with a named key.',
      operations: {
        update: async (req, f): Promise<LogicalResponse> => {
          const items = batchItems(f);
          const all = items ?? [singleItem(f, SINGLE)];
          const withSig = all.filter((i) => itemHas(i, 'signature')).length;
          const withHmac = all.filter((i) => itemHas(i, 'hmac')).length;
          if (!items && withSig > 0 && withHmac > 0) throw badRequest("provide one of 'signature' or 'hmac'");
          if (!items && withSig === 0 && withHmac === 0) throw badRequest("neither a 'signature' nor an 'hmac' were given to verify");
          if (items && withSig > 0 && withHmac > 0) throw badRequest("batch items must all use 'signature' or all use 'hmac', not both");
          const p = await loadPolicy(req.storage, f.get<string>('name'));
          if (!p) throw badRequest('signature verification key not found');
          const useHmac = withHmac > 0;
          let run: (item: Item) => Promise<boolean>;
          if (useHmac) {
            if (p.type === 'managed_key') throw badRequest(HMAC_NOT_MANAGED);
            const h = hmacAlgorithm(f);
            run = (item) => checkHmac(p, h, itemBytes(item, 'input'), itemString(item, 'hmac'));
          } else {
            checkSigningKey(p);
            const o = signOptions(f, p);
            const managed = managedUse(managedKeys, req);
            run = (item) => verifySignature(p, o, item, managed);
          }
          if (!items) return { data: { valid: await run(all[0]) } };
          const cost = { itemUs: itemCostUs(p.type, useHmac ? 'secret' : 'public'), budgetMs };
          const results = await eachItem(
            items,
            async (item) => {
              if (itemString(item, useHmac ? 'hmac' : 'signature') === '') throw badRequest(`missing ${useHmac ? 'hmac' : 'signature'} to verify`);
              return { valid: await run(item) };
            },
            cost,
          );
          for (const r of results) r.valid ??= false;
          return { data: { batch_results: results } };
        },
      },
    },
  ];
}

