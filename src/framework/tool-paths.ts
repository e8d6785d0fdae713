// random(/:source)(/:bytes) and hash(/:algorithm): no key involved. Served at sys/tools/ and by
// every transit mount, as Vault does.

import type { PathDef } from './backend';
import { fromBase64, toBase64, toHex } from '../crypto/encoding';
import { randomBytes } from '../crypto/random';
import { digest, parseHashName } from '../crypto/transit/hashes';
import { badRequest } from './errors';

export const MAX_RANDOM_BYTES = 128 * 1024;

function encode(bytes: Uint8Array, format: string): string {
  if (format === 'hex') return toHex(bytes);
  if (format === 'base64') return toBase64(bytes);
  throw badRequest(`unsupported encoding format ${format}; must be "hex" or "base64"`);
}

/** The paths under `prefix` ("" for transit, "tools/" for sys). */
export function toolPaths(prefix = ''): PathDef[] {
  return [
    {
      // random, random/<bytes>, random/<source>, random/<source>/<bytes>
      pattern: `${prefix}random(?:/(?<source>[a-z]+))?(?:/(?<urlbytes>[^/]+))?`,
      fields: {
        bytes: { type: 'int', description: 'Number of bytes (default 32)', default: 32 },
        urlbytes: { type: 'string', description: 'Number of bytes, in the path' },
        format: { type: 'string', description: 'hex or base64 (default)', default: 'base64' },
        source: { type: 'string', description: 'platform (default), seal or all', default: 'platform' },
      },
      summary: 'Random bytes from the platform CSPRNG.',
      operations: {
        update: async (_req, f) => {
          let bytes = f.get<number>('bytes');
          const inPath = f.get<string>('urlbytes');
          if (inPath !== '') {
            if (!/^\d+$/.test(inPath)) throw badRequest(`error parsing url-set byte count: ${inPath}`);
            bytes = parseInt(inPath, 10);
          }
          const source = f.get<string>('source');
          // One entropy source here: the seal and "all" draw from the same platform CSPRNG.
          if (source !== 'platform' && source !== 'seal' && source !== 'all') throw badRequest(`unsupported entropy source ${source}; must be "platform", "seal" or "all"`);
          if (bytes < 1) throw badRequest('bytes must be positive');
          if (bytes > MAX_RANDOM_BYTES) throw badRequest(`bytes cannot be more than ${MAX_RANDOM_BYTES}`);
          return { data: { random_bytes: encode(randomBytes(bytes), f.get<string>('format')) } };
        },
      },
    },
    {
      pattern: `${prefix}hash(?:/(?<urlalgorithm>[^/]+))?`,
      fields: {
        input: { type: 'string', description: 'Base64 input', required: true },
        algorithm: { type: 'string', description: 'Hash algorithm (default sha2-256)', default: 'sha2-256' },
        urlalgorithm: { type: 'string', description: 'Hash algorithm, in the path' },
        format: { type: 'string', description: 'hex (default) or base64', default: 'hex' },
      },
      summary: 'Hash data.',
      operations: {
        update: async (_req, f) => {
          const name = f.get<string>('urlalgorithm') || f.get<string>('algorithm');
          const algorithm = parseHashName(name);
          if (!algorithm) throw badRequest(`unsupported algorithm ${name}`);
          const format = f.get<string>('format');
          if (format !== 'hex' && format !== 'base64') throw badRequest(`unsupported encoding format ${format}; must be "hex" or "base64"`);
          const input = fromBase64(f.get<string>('input'));
          if (!input) throw badRequest('unable to decode input as base64');
          return { data: { sum: encode(await digest(algorithm, input), format) } };
        },
      },
    },
  ];
}
