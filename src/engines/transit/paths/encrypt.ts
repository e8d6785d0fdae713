// encrypt/:name (with upsert), decrypt/:name, rewrap/:name and datakey/:type/:name.

import type { LogicalRequest, LogicalResponse, PathDef } from '../../../framework/backend';
import { nameRegex } from '../../../framework/backend';
import { toBase64 } from '../../../crypto/encoding';
import { rsaBitsOf } from '../../../crypto/transit/asymmetric';
import { randomBytes } from '../../../crypto/random';
import { badRequest } from '../../../framework/errors';
import type { FieldData, FieldSchemas } from '../../../framework/fields';
import {
  batchItems,
  batchStatus,
  eachItem,
  itemBool,
  itemBytes,
  itemInt,
  itemString,
  partialFailureCode,
  singleItem,
  type BatchCost,
  type Item,
  type ItemResult,
} from '../batch';
import { itemCostUs, type KeyOperation } from '../batch-cost';
import type { CipherOptions } from '../ciphertexts';
import type { ManagedKeyAccess } from '../../../managed-keys/access';
import { valueCiphers } from '../managed/cipher';
import { buildPolicy } from '../create';
import { loadKeysConfig } from './config';
import type { KeyPolicy } from '../policy';
import { loadPolicy, savePolicy } from '../store';

const name = { type: 'string', description: 'Key name', required: true } as const;
const COMMON: FieldSchemas = {
  name,
  context: { type: 'string', description: 'Base64 context for key derivation' },
  nonce: { type: 'string', description: 'Base64 nonce (legacy convergent keys only)' },
  key_version: { type: 'int', description: 'Key version to use (0: latest)' },
  associated_data: { type: 'string', description: 'Base64 data authenticated with AEAD ciphers' },
  padding_scheme: { type: 'string', description: 'RSA padding: oaep (default) or pkcs1v15' },
  reference: { type: 'string', description: 'Echoed in batch results' },
  batch_input: { type: 'any', description: 'Items to process in one request' },
  partial_failure_response_code: { type: 'int', description: 'Status when some batch items fail' },
};

const ITEM_FIELDS = ['plaintext', 'ciphertext', 'context', 'nonce', 'key_version', 'associated_data', 'padding_scheme', 'type', 'convergent_encryption', 'reference'];

const options = (item: Item, padding = 'padding_scheme'): CipherOptions => ({
  context: itemBytes(item, 'context'),
  nonce: itemBytes(item, 'nonce'),
  associatedData: itemBytes(item, 'associated_data'),
  padding: itemString(item, padding),
});

/** One item or a batch: a single request answers its result's fields (or its error as a 400). */
async function respond(f: FieldData, run: (item: Item) => Promise<ItemResult>, cost: BatchCost, batchCodes: 'status' | 'ok'): Promise<LogicalResponse> {
  const items = batchItems(f);
  if (!items) return { data: await run(singleItem(f, ITEM_FIELDS)) };
  const code = partialFailureCode(f);
  const results = await eachItem(items, run, cost);
  if (batchCodes === 'ok') return { data: { batch_results: results } };
  const status = batchStatus(results, code);
  return status === 200 ? { data: { batch_results: results } } : { data: { batch_results: results }, status };
}

// The existence check has loaded the key already: the handler of the same request reuses it.
const checked = new WeakMap<LogicalRequest, KeyPolicy | null>();

async function keyOf(req: LogicalRequest, name: string): Promise<KeyPolicy | null> {
  if (checked.has(req)) return checked.get(req) ?? null;
  const p = await loadPolicy(req.storage, name);
  checked.set(req, p);
  return p;
}

/** The batch cost of `ops` with key `p` per item (RSA's halves differ; ciphers use one key). */
const costOf = (p: KeyPolicy, ops: KeyOperation[], budgetMs: number): BatchCost => ({
  itemUs: ops.reduce((sum, op) => sum + itemCostUs(p.type, op), 0),
  budgetMs,
});

async function encrypt(req: LogicalRequest, f: FieldData, mayCreate: boolean, budgetMs: number, managed: ManagedKeyAccess | undefined): Promise<LogicalResponse> {
  const keyName = f.get<string>('name');
  const items = batchItems(f);
  if (!items && f.raw.plaintext === undefined) throw badRequest('missing plaintext to encrypt');
  let p = await keyOf(req, keyName);
  if (!p) p = await upsert(req, f, keyName, items?.[0] ?? singleItem(f, ITEM_FIELDS), mayCreate);
  const key: KeyPolicy = p;
  const ciphers = valueCiphers(managed, req);
  return await respond(
    f,
    async (item) => {
      const plaintext = itemBytes(item, 'plaintext');
      const out = await ciphers.encrypt(key, itemInt(item, 'key_version'), plaintext, options(item));
      return { ciphertext: out.ciphertext, key_version: out.version };
    },
    costOf(key, ['public'], budgetMs),
    'status',
  );
}

/** Creates the key an encrypt names, when the caller may (create capability, upsert enabled). */
async function upsert(req: LogicalRequest, f: FieldData, keyName: string, first: Item, mayCreate: boolean): Promise<KeyPolicy> {
  if (!mayCreate || (await loadKeysConfig(req.storage)).disableUpsert) throw badRequest('encryption key not found');
  const context = itemBytes(first, 'context');
  const p = await buildPolicy(
    keyName,
    {
      type: itemString(first, 'type') || f.get<string>('type'),
      derived: context.length > 0,
      convergent: itemBool(first, 'convergent_encryption') || f.get<boolean>('convergent_encryption'),
      exportable: false,
      allowPlaintextBackup: false,
      keySize: 0,
      autoRotatePeriod: 0,
    },
    Date.now(),
    undefined,
    req.rsaPairs,
  );
  await savePolicy(req.storage, p);
  return p;
}

async function mustLoad(req: LogicalRequest, f: FieldData): Promise<KeyPolicy> {
  const p = await loadPolicy(req.storage, f.get<string>('name'));
  if (!p) throw badRequest('encryption key not found');
  return p;
}

/** An encrypt that creates an RSA key (upsert) has its pair made outside the mount's object. */
async function upsertRsaBits(req: LogicalRequest, f: FieldData): Promise<number[]> {
  const first = batchItems(f)?.[0] ?? singleItem(f, ITEM_FIELDS);
  const bits = rsaBitsOf(itemString(first, 'type') || f.get<string>('type'));
  if (bits === undefined || (await keyOf(req, f.get<string>('name')))) return [];
  return [bits];
}

export function encryptPaths(budgetMs: number, managed?: ManagedKeyAccess): PathDef[] {
  const encryptCreate = (req: LogicalRequest, f: FieldData) => encrypt(req, f, true, budgetMs, managed);
  const encryptUpdate = (req: LogicalRequest, f: FieldData) => encrypt(req, f, false, budgetMs, managed);
  return [
    {
      pattern: `encrypt/${nameRegex('name')}`,
      fields: {
        ...COMMON,
        plaintext: { type: 'string', description: 'Base64 plaintext' },
        type: { type: 'string', description: 'Key type when the key is created by this request', default: 'aes256-gcm96' },
        convergent_encryption: { type: 'bool', description: 'Convergent encryption when the key is created by this request' },
      },
      summary: 'Encrypt with a named key (creating it when the caller may).',
      existenceCheck: async (req, f) => (await keyOf(req, f.get<string>('name'))) !== null,
      // Without create on a missing key, update answers "encryption key not found".
      updateWhenCreateDenied: true,
      rsaKeysNeeded: upsertRsaBits,
      operations: { create: encryptCreate, update: encryptUpdate },
    },
    {
      pattern: `decrypt/${nameRegex('name')}`,
      fields: { ...COMMON, ciphertext: { type: 'string', description: 'Ciphertext to decrypt' } },
      summary: 'Decrypt with a named key.',
      operations: {
        update: async (req, f) => {
          if (!batchItems(f) && f.raw.ciphertext === undefined) throw badRequest('missing ciphertext to decrypt');
          const p = await mustLoad(req, f);
          const ciphers = valueCiphers(managed, req);
          return await respond(
            f,
            async (item) => ({ plaintext: toBase64(await ciphers.decrypt(p, itemString(item, 'ciphertext'), options(item))) }),
            costOf(p, ['private'], budgetMs),
            'status',
          );
        },
      },
    },
    {
      pattern: `rewrap/${nameRegex('name')}`,
      fields: {
        ...COMMON,
        ciphertext: { type: 'string', description: 'Ciphertext to re-encrypt' },
        decrypt_padding_scheme: { type: 'string', description: 'RSA padding of the given ciphertext' },
        encrypt_padding_scheme: { type: 'string', description: 'RSA padding of the new ciphertext' },
      },
      summary: 'Re-encrypt a ciphertext with the latest (or given) key version, never returning the plaintext.',
      operations: {
        update: async (req, f) => {
          if (!batchItems(f) && f.raw.ciphertext === undefined) throw badRequest('missing ciphertext to rewrap');
          const p = await mustLoad(req, f);
          const ciphers = valueCiphers(managed, req);
          return await respond(
            f,
            async (item) => {
              const plaintext = await ciphers.decrypt(p, itemString(item, 'ciphertext'), options(item, itemString(item, 'decrypt_padding_scheme') ? 'decrypt_padding_scheme' : 'padding_scheme'));
              const out = await ciphers.encrypt(p, itemInt(item, 'key_version'), plaintext, options(item, itemString(item, 'encrypt_padding_scheme') ? 'encrypt_padding_scheme' : 'padding_scheme'));
              return { ciphertext: out.ciphertext, key_version: out.version };
            },
            costOf(p, ['private', 'public'], budgetMs),
            'ok',
          );
        },
      },
    },
    {
      pattern: `datakey/(?<plaintext>[^/]+)/${nameRegex('name')}`,
      fields: {
        ...COMMON,
        plaintext: { type: 'string', description: '"plaintext" (also return the key) or "wrapped"' },
        bits: { type: 'int', description: 'Key size in bits: 128, 256 or 512', default: 256 },
      },
      summary: 'Generate a data key, returned encrypted with the named key (and in plaintext if asked).',
      operations: {
        update: async (req, f) => {
          const kind = f.get<string>('plaintext');
          if (kind !== 'plaintext' && kind !== 'wrapped') throw badRequest(`invalid path: data key type must be "plaintext" or "wrapped", not "${kind}"`);
          const bits = f.get<number>('bits');
          if (bits !== 128 && bits !== 256 && bits !== 512) throw badRequest(`invalid bits value ${bits}: must be 128, 256 or 512`);
          const p = await mustLoad(req, f);
          const dataKey = randomBytes(bits / 8);
          const item = singleItem(f, ITEM_FIELDS);
          const out = await valueCiphers(managed, req).encrypt(p, itemInt(item, 'key_version'), dataKey, options(item));
          const data: Record<string, unknown> = { ciphertext: out.ciphertext, key_version: out.version };
          if (kind === 'plaintext') data.plaintext = toBase64(dataKey);
          return { data };
        },
      },
    },
  ];
}
