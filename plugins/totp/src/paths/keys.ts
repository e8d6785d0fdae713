// <mount>/keys and <mount>/keys/:name: a key is generated here (its otpauth URL and QR code
// returned once) or imported from another service's URL or base32 secret.

import type { LogicalRequest, LogicalResponse, PathDef } from '../../../../src/framework/backend';
import { toBase64 } from '../../../../src/crypto/encoding';
import { randomBytes } from '../../../../src/crypto/random';
import { badRequest, notFound } from '../../../../src/framework/errors';
import type { FieldData } from '../../../../src/framework/fields';
import { KEY_NAME } from '../context';
import { ALGORITHMS, type Algorithm } from '../otp';
import { buildOtpauthUrl, parseOtpauthUrl } from '../otpauth';
import { MAX_QR_SIZE, qrPng } from '../qr';
import { formatSecret, parseSecret } from '../secret';
import { deleteKey, KEY_PREFIX, readKey, writeKey, type KeyEntry } from '../store';

/** Largest generated secret (Vault has no limit; HMAC gains nothing past the hash's block size). */
export const MAX_KEY_SIZE = 1024;

export function keysListPath(): PathDef {
  return {
    pattern: 'keys/?',
    summary: 'Lists the names of the keys.',
    operations: {
      list: async (req) => {
        const keys = await req.storage.list(KEY_PREFIX);
        if (keys.length === 0) throw notFound();
        return { data: { keys } };
      },
    },
  };
}

export function keyPath(): PathDef {
  return {
    pattern: `keys/${KEY_NAME}`,
    summary: 'Creates (generates or imports), reads and deletes a key.',
    fields: {
      name: { type: 'string', description: 'Name of the key.' },
      generate: { type: 'bool', default: false, description: 'Generate the key here (true) or import it from another service (false).' },
      exported: { type: 'bool', default: true, description: 'With generate: return the otpauth URL and QR code of the new key.' },
      key_size: { type: 'int', default: 20, description: 'With generate: size of the secret in bytes.' },
      url: { type: 'string', description: 'Without generate: an otpauth://totp/ URL that sets the key and its parameters.' },
      key: { type: 'string', description: 'Without generate and url: the secret, base32.' },
      issuer: { type: 'string', description: "The key's issuing organisation (required with generate)." },
      account_name: { type: 'string', description: 'The account the key belongs to (required with generate).' },
      period: { type: 'duration', default: 30, description: 'Length of a time step.' },
      algorithm: { type: 'string', default: 'SHA1', description: 'HMAC hash: SHA1, SHA256 or SHA512.' },
      digits: { type: 'int', default: 6, description: 'Digits of a code: 6 or 8.' },
      skew: { type: 'int', default: 1, description: 'Time steps either side of the current one whose codes validation accepts: 0 or 1.' },
      qr_size: { type: 'int', default: 200, description: 'With generate and exported: side of the square QR code in pixels (0: no QR code).' },
    },
    prefetch: { read: [`${KEY_PREFIX}{name}`] },
    operations: {
      read: async (req, f) => {
        const entry = await readKey(req.storage, f.get<string>('name'));
        if (!entry) throw notFound();
        return {
          data: { account_name: entry.account_name, algorithm: entry.algorithm, digits: entry.digits, issuer: entry.issuer, period: entry.period },
        };
      },
      update: createKey,
      delete: async (req, f) => {
        await deleteKey(req.storage, f.get<string>('name'));
        return null;
      },
    },
  };
}

/** Checks in Vault's order, with Vault's messages. */
async function createKey(req: LogicalRequest, f: FieldData): Promise<LogicalResponse | null> {
  const generate = f.get<boolean>('generate');
  const url = f.get<string>('url');
  let secret = f.get<string>('key');
  let issuer = f.get<string>('issuer');
  let accountName = f.get<string>('account_name');
  let period = f.get<number>('period');
  let algorithmName = f.get<string>('algorithm');
  let digits = f.get<number>('digits');
  const skew = f.get<number>('skew');
  const qrSize = f.get<number>('qr_size');
  const keySize = f.get<number>('key_size');

  if (generate && secret !== '') throw badRequest('a key should not be passed if generate is true');
  if (generate && url !== '') throw badRequest('a url should not be passed if generate is true');
  if (url !== '') {
    const parsed = parseOtpauthUrl(url);
    issuer = parsed.issuer ?? issuer;
    accountName = parsed.accountName;
    secret = parsed.secret;
    period = parsed.period ?? period;
    digits = parsed.digits ?? digits;
    algorithmName = parsed.algorithm ?? algorithmName;
  }

  if (digits !== 6 && digits !== 8) throw badRequest('the digits value can only be 6 or 8');
  const algorithm = algorithmName.toUpperCase() as Algorithm;
  if (!ALGORITHMS.includes(algorithm)) throw badRequest('the algorithm value is not valid');
  if (period <= 0) throw badRequest('the period value must be greater than zero');
  if (skew !== 0 && skew !== 1) throw badRequest('the skew value must be 0 or 1');
  if (qrSize < 0) throw badRequest('the qr_size value must be greater than or equal to zero');
  if (qrSize > MAX_QR_SIZE) throw badRequest(`the qr_size value must be at most ${MAX_QR_SIZE}`);
  if (keySize <= 0) throw badRequest('the key_size value must be greater than zero');
  if (keySize > MAX_KEY_SIZE) throw badRequest(`the key_size value must be at most ${MAX_KEY_SIZE}`);

  let response: LogicalResponse | null = null;
  if (generate) {
    if (accountName === '') throw badRequest('the account_name value is required for generated keys');
    if (issuer === '') throw badRequest('the issuer value is required for generated keys');
    secret = formatSecret(randomBytes(keySize));
    if (f.get<boolean>('exported')) {
      const otpauth = buildOtpauthUrl({ issuer, accountName, secret, algorithm, digits, period });
      // The QR code is drawn before anything is stored, so one that cannot be drawn stores nothing.
      response = { data: qrSize === 0 ? { url: otpauth } : { url: otpauth, barcode: toBase64(qrPng(otpauth, qrSize)) } };
    }
  } else {
    secret = formatSecret(parseSecret(secret));
  }

  const entry: KeyEntry = { key: secret, issuer, account_name: accountName, period, algorithm, digits, skew };
  await writeKey(req.storage, f.get<string>('name'), entry);
  return response;
}
