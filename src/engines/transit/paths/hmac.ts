// hmac/:name(/:algorithm), and checking an HMAC for verify/:name (reference §6.8).

import type { LogicalResponse, PathDef } from '../../../framework/backend';
import { nameRegex } from '../../../framework/backend';
import { fromBase64, toBase64 } from '../../../crypto/encoding';
import { hmac, parseHashName, type HashName } from '../../../crypto/transit/hashes';
import { constantTimeEqual } from '../../../crypto/timing';
import { badRequest } from '../../../framework/errors';
import type { FieldData } from '../../../framework/fields';
import { batchItems, eachItem, itemBytes, itemInt, singleItem } from '../batch';
import { itemCostUs } from '../batch-cost';
import type { KeyPolicy } from '../policy';
import { loadPolicy } from '../store';
import { usableVersion } from '../versions';

/** A managed key's `mac` usage is not transit's HMAC: transit HMACs use a key of its own per version. */
export const HMAC_NOT_MANAGED = 'HMAC is not supported for keys of type managed_key';

// HMACs always carry this prefix, whatever the key's version template.
const HMAC_PREFIX = 'vault:v';

/** The HMAC algorithm of a request: the path segment wins over the body. */
export function hmacAlgorithm(f: FieldData): HashName {
  const name = f.get<string>('urlalgorithm') || f.get<string>('algorithm') || f.get<string>('hash_algorithm') || 'sha2-256';
  const h = parseHashName(name);
  if (!h || h === 'sha1') throw badRequest(`unsupported algorithm ${name}`);
  return h;
}

export async function makeHmac(p: KeyPolicy, h: HashName, version: number, input: Uint8Array): Promise<{ hmac: string; version: number }> {
  const use = usableVersion(p, version);
  return { hmac: `${HMAC_PREFIX}${use.version}:${toBase64(await hmac(h, use.entry.hmacKey, input))}`, version: use.version };
}

/** True when `value` is the HMAC of `input` under the version it names. */
export async function checkHmac(p: KeyPolicy, h: HashName, input: Uint8Array, value: string): Promise<boolean> {
  if (!value.startsWith(HMAC_PREFIX)) throw badRequest('invalid HMAC to verify: no prefix');
  const rest = value.slice(HMAC_PREFIX.length);
  const colon = rest.indexOf(':');
  if (colon < 0) throw badRequest('invalid HMAC: wrong number of fields');
  if (!/^\d+$/.test(rest.slice(0, colon))) throw badRequest('invalid HMAC: version number could not be decoded');
  const version = parseInt(rest.slice(0, colon), 10);
  const given = fromBase64(rest.slice(colon + 1));
  if (!given) throw badRequest('unable to decode verification HMAC as base64');
  if (version > p.latestVersion) throw badRequest('invalid HMAC: version is too new');
  if (version < p.minDecryptionVersion) throw badRequest('cannot verify HMAC: version is too old (disallowed by policy)');
  const entry = p.versions.get(version);
  if (!entry) throw badRequest('cannot verify HMAC: version is too old (disallowed by policy)');
  return constantTimeEqual(await hmac(h, entry.hmacKey, input), given);
}

export const HMAC_FIELDS = {
  algorithm: { type: 'string', description: 'Hash algorithm (default sha2-256)' },
  hash_algorithm: { type: 'string', description: 'Alias of algorithm' },
  urlalgorithm: { type: 'string', description: 'Hash algorithm, in the path' },
} as const;

export function hmacPaths(budgetMs: number): PathDef[] {
  return [
    {
      pattern: `hmac/${nameRegex('name')}(?:/(?<urlalgorithm>[^/]+))?`,
      fields: {
        name: { type: 'string', description: 'Key name', required: true },
        ...HMAC_FIELDS,
        input: { type: 'string', description: 'Base64 input' },
        key_version: { type: 'int', description: 'Key version (0: latest)' },
        reference: { type: 'string', description: 'Echoed in batch results' },
        batch_input: { type: 'any', description: 'Items to HMAC in one request' },
      },
      summary: 'HMAC data with a named key.',
      operations: {
        update: async (req, f): Promise<LogicalResponse> => {
          const p = await loadPolicy(req.storage, f.get<string>('name'));
          if (!p) throw badRequest('encryption key not found');
          if (p.type === 'managed_key') throw badRequest(HMAC_NOT_MANAGED);
          const h = hmacAlgorithm(f);
          const items = batchItems(f);
          const run = async (item: Record<string, unknown>) => {
            if (item.input === undefined) throw badRequest('missing input for HMAC');
            const input = itemBytes(item, 'input');
            return { hmac: (await makeHmac(p, h, itemInt(item, 'key_version'), input)).hmac };
          };
          if (!items) return { data: await run(singleItem(f, ['input', 'key_version'])) };
          return { data: { batch_results: await eachItem(items, run, { itemUs: itemCostUs(p.type, 'secret'), budgetMs }) } };
        },
      },
    },
  ];
}

