// <mount>/code/:name: read the current code of a key, or validate a code against it. A submitted
// code is refused again for as long as it could be valid (Vault's replay rule), whether or not it
// was valid the first time.

import type { PathDef } from '../../../../src/framework/backend';
import { badRequest } from '../../../../src/framework/errors';
import type { Storage } from '../../../../src/framework/storage';
import { KEY_NAME, type TotpContext } from '../context';
import { totpCode, totpValid, type OtpParams } from '../otp';
import { parseSecret } from '../secret';
import { codeUsed, KEY_PREFIX, readKey, recordUsedCode, USED_PREFIX, type KeyEntry } from '../store';

async function knownKey(storage: Storage, name: string): Promise<KeyEntry> {
  const entry = await readKey(storage, name);
  if (!entry) throw badRequest(`unknown key: ${name}`);
  return entry;
}

const otpParams = (entry: KeyEntry): OtpParams => ({
  secret: parseSecret(entry.key),
  algorithm: entry.algorithm,
  digits: entry.digits,
  period: entry.period,
});

export function codePath(ctx: TotpContext): PathDef {
  return {
    pattern: `code/${KEY_NAME}`,
    summary: "Generates a key's current code (read) or validates a code (write).",
    fields: {
      name: { type: 'string', description: 'Name of the key.' },
      code: { type: 'string', description: 'The code to validate.' },
    },
    prefetch: { read: [`${KEY_PREFIX}{name}`], update: [`${KEY_PREFIX}{name}`, `${USED_PREFIX}{name}`] },
    operations: {
      read: async (req, f) => {
        const entry = await knownKey(req.storage, f.get<string>('name'));
        return { data: { code: await totpCode(otpParams(entry), ctx.now()) } };
      },
      update: async (req, f) => {
        const name = f.get<string>('name');
        const code = f.get<string>('code').trim();
        if (code === '') throw badRequest('the code value is required');
        const entry = await knownKey(req.storage, name);
        const now = ctx.now();
        if (await codeUsed(req.storage, name, code, now)) throw badRequest('code already used; wait until the next time period');
        const valid = await totpValid(otpParams(entry), code, now, entry.skew);
        // A code of the wrong length can never be valid: there is nothing to guard against replay.
        if (code.length === entry.digits) {
          // As Vault: the current step, the skew either side and one more step cover every time
          // at which the code could still be accepted.
          const until = now + entry.period * (2 + entry.skew) * 1000;
          await recordUsedCode(req.storage, name, code, now, until);
          req.wakeAt?.(until);
        }
        return { data: { valid } };
      },
    },
  };
}
