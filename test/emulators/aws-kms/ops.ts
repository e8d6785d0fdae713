// The KMS operations (X-Amz-Target TrentService.<Op>) over an account's keys: request members as
// KMS names them, binary members base64, answers in KMS's shapes (ARNs for KeyId in results,
// dates as epoch seconds), and KMS's checks and error codes for key state, usage and algorithm.
import { oaepDecrypt, oaepEncrypt, oaepMaxPlaintext, signDigest, signRaw, verifyDigest, verifyRaw } from './crypto';
import { disabled, invalidCiphertext, invalidKeyUsage, invalidSignature, invalidState, KmsError, missingMember, notFound, validation } from './errors';
import { encryptionAlgorithmsOf, ENCRYPTION_ALGORITHMS, signingAlgorithmsOf, SIGNING_ALGORITHMS, type SigningAlgorithm } from './specs';
import { epochSeconds, type Account, type KmsKey } from './state';

export type Body = Record<string, unknown>;

export interface OpContext {
  account: Account;
  region: string;
  body: Body;
}

/** An operation's result: the JSON answered, or undefined for an empty 200. */
type Op = (ctx: OpContext) => Promise<Body | undefined> | Body | undefined;

/** Members whose values are base64 blobs (the call log records their decoded length). */
export const BLOB_MEMBERS = new Set(['Message', 'Signature', 'Plaintext', 'CiphertextBlob']);

const lowerFirst = (s: string) => s[0].toLowerCase() + s.slice(1);

function optText(body: Body, member: string): string | undefined {
  const v = body[member];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new KmsError(400, 'SerializationException', `${member} must be a string`);
  return v;
}

function text(body: Body, member: string): string {
  const v = optText(body, member);
  if (v === undefined) throw missingMember(lowerFirst(member));
  if (v === '') throw validation(`1 validation error detected: Value '' at '${lowerFirst(member)}' failed to satisfy constraint: Member must have length greater than or equal to 1`);
  return v;
}

function blob(body: Body, member: string): Buffer {
  const v = text(body, member);
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(v) || v.length % 4 !== 0) throw new KmsError(400, 'SerializationException', `${member} is not valid base64`);
  return Buffer.from(v, 'base64');
}

function oneOf(value: string, member: string, allowed: readonly string[]): string {
  if (!allowed.includes(value)) {
    throw validation(`1 validation error detected: Value '${value}' at '${lowerFirst(member)}' failed to satisfy constraint: Member must satisfy enum value set: [${allowed.join(', ')}]`);
  }
  return value;
}

/** A key cryptographic operations may use: enabled, and not pending deletion. */
function usable(key: KmsKey): KmsKey {
  if (key.state === 'Disabled') throw disabled(key.arn);
  if (key.state === 'PendingDeletion') throw invalidState(key.arn);
  return key;
}

function signingParams(ctx: OpContext, op: 'Sign' | 'Verify'): { key: KmsKey; alg: SigningAlgorithm; algName: string; message: Buffer; digest: boolean } {
  const key = usable(ctx.account.resolveKey(ctx.region, text(ctx.body, 'KeyId')));
  const message = blob(ctx.body, 'Message');
  const algName = oneOf(text(ctx.body, 'SigningAlgorithm'), 'SigningAlgorithm', Object.keys(SIGNING_ALGORITHMS));
  const messageType = oneOf(optText(ctx.body, 'MessageType') ?? 'RAW', 'MessageType', ['RAW', 'DIGEST']);
  if (key.usage !== 'SIGN_VERIFY') throw invalidKeyUsage(key.arn, key.usage, op);
  if (!signingAlgorithmsOf(key.spec, key.usage).includes(algName)) throw validation(`Algorithm ${algName} is incompatible with key spec ${key.specName}.`);
  const alg = SIGNING_ALGORITHMS[algName];
  if (messageType === 'DIGEST' && message.length !== alg.length) throw validation(`Digest is invalid length for algorithm ${algName}.`);
  if (message.length > 4096) throw validation(`1 validation error detected: Value at 'message' failed to satisfy constraint: Member must have length less than or equal to 4096`);
  return { key, alg, algName, message, digest: messageType === 'DIGEST' };
}

function encryptionParams(ctx: OpContext, key: KmsKey, op: 'Encrypt' | 'Decrypt'): { algName: string; hash: 'sha1' | 'sha256' | 'sha384' | 'sha512' } {
  const algName = oneOf(optText(ctx.body, 'EncryptionAlgorithm') ?? 'SYMMETRIC_DEFAULT', 'EncryptionAlgorithm', ['SYMMETRIC_DEFAULT', ...Object.keys(ENCRYPTION_ALGORITHMS), 'SM2PKE']);
  if (key.usage !== 'ENCRYPT_DECRYPT') throw invalidKeyUsage(key.arn, key.usage, op);
  if (!encryptionAlgorithmsOf(key.spec, key.usage).includes(algName)) throw validation(`Algorithm ${algName} is incompatible with key spec ${key.specName}.`);
  return { algName, hash: ENCRYPTION_ALGORITHMS[algName] };
}

function aliasEntry(ctx: OpContext, a: { name: string; targetKeyId: string; created: number; updated: number }): Body {
  return { AliasName: a.name, AliasArn: ctx.account.aliasArn(ctx.region, a.name), TargetKeyId: a.targetKeyId, CreationDate: epochSeconds(a.created), LastUpdatedDate: epochSeconds(a.updated) };
}

function page<T>(ctx: OpContext, items: T[], name: string, view: (item: T) => Body): Body {
  const limit = ctx.body.Limit === undefined ? 50 : Number(ctx.body.Limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw validation(`1 validation error detected: Value '${String(ctx.body.Limit)}' at 'limit' failed to satisfy constraint: Member must have value between 1 and 1000`);
  const marker = optText(ctx.body, 'Marker');
  const start = marker === undefined ? 0 : Number(marker);
  if (!Number.isInteger(start) || start < 0) throw validation('Invalid marker');
  const slice = items.slice(start, start + limit);
  const truncated = start + limit < items.length;
  return { [name]: slice.map(view), Truncated: truncated, ...(truncated ? { NextMarker: String(start + limit) } : {}) };
}

export const OPERATIONS: Readonly<Record<string, Op>> = {
  async CreateKey(ctx) {
    const specName = optText(ctx.body, 'KeySpec') ?? optText(ctx.body, 'CustomerMasterKeySpec') ?? 'SYMMETRIC_DEFAULT';
    const usage = optText(ctx.body, 'KeyUsage') ?? 'ENCRYPT_DECRYPT';
    const origin = optText(ctx.body, 'Origin') ?? 'AWS_KMS';
    if (origin !== 'AWS_KMS') throw new KmsError(400, 'UnsupportedOperationException', `Origin ${origin} is not supported by this emulator.`);
    const key = await ctx.account.createKey(ctx.region, specName, usage, optText(ctx.body, 'Description') ?? '');
    return { KeyMetadata: ctx.account.metadata(key) };
  },

  DescribeKey: (ctx) => ({ KeyMetadata: ctx.account.metadata(ctx.account.resolveKey(ctx.region, text(ctx.body, 'KeyId'))) }),

  ListKeys: (ctx) => page(ctx, [...ctx.account.keys.values()].filter((k) => k.region === ctx.region), 'Keys', (k) => ({ KeyId: k.id, KeyArn: k.arn })),

  GetPublicKey(ctx) {
    const key = usable(ctx.account.resolveKey(ctx.region, text(ctx.body, 'KeyId')));
    const algorithms = encryptionAlgorithmsOf(key.spec, key.usage);
    const signing = signingAlgorithmsOf(key.spec, key.usage);
    return {
      KeyId: key.arn,
      PublicKey: key.pair.spki.toString('base64'),
      CustomerMasterKeySpec: key.specName,
      KeySpec: key.specName,
      KeyUsage: key.usage,
      ...(algorithms.length ? { EncryptionAlgorithms: algorithms } : {}),
      ...(signing.length ? { SigningAlgorithms: signing } : {}),
      ...(key.usage === 'KEY_AGREEMENT' ? { KeyAgreementAlgorithms: ['ECDH'] } : {}),
    };
  },

  async Sign(ctx) {
    const { key, alg, algName, message, digest } = signingParams(ctx, 'Sign');
    const signature = digest ? await signDigest(key.pair, alg, message) : signRaw(key.pair, alg, message);
    return { KeyId: key.arn, Signature: signature.toString('base64'), SigningAlgorithm: algName };
  },

  async Verify(ctx) {
    const { key, alg, algName, message, digest } = signingParams(ctx, 'Verify');
    const signature = blob(ctx.body, 'Signature');
    const valid = digest ? await verifyDigest(key.pair, alg, message, signature) : verifyRaw(key.pair, alg, message, signature);
    if (!valid) throw invalidSignature();
    return { KeyId: key.arn, SignatureValid: true, SigningAlgorithm: algName };
  },

  Encrypt(ctx) {
    const key = usable(ctx.account.resolveKey(ctx.region, text(ctx.body, 'KeyId')));
    const plaintext = blob(ctx.body, 'Plaintext');
    const { algName, hash } = encryptionParams(ctx, key, 'Encrypt');
    if (key.spec.kind !== 'rsa' || plaintext.length > oaepMaxPlaintext(key.spec.bits, hash)) {
      throw validation(`Plaintext is too long for encryption algorithm ${algName} with key spec ${key.specName}.`);
    }
    return { CiphertextBlob: oaepEncrypt(key.pair, hash, plaintext).toString('base64'), KeyId: key.arn, EncryptionAlgorithm: algName };
  },

  Decrypt(ctx) {
    const ciphertext = blob(ctx.body, 'CiphertextBlob');
    // Asymmetric ciphertexts carry no key reference: without KeyId there is nothing to decrypt with.
    const ref = optText(ctx.body, 'KeyId');
    if (ref === undefined) throw invalidCiphertext();
    const key = usable(ctx.account.resolveKey(ctx.region, ref));
    const { algName, hash } = encryptionParams(ctx, key, 'Decrypt');
    const plaintext = oaepDecrypt(key.pair, hash, ciphertext);
    if (!plaintext) throw invalidCiphertext();
    return { KeyId: key.arn, Plaintext: plaintext.toString('base64'), EncryptionAlgorithm: algName };
  },

  CreateAlias(ctx) {
    const name = text(ctx.body, 'AliasName');
    const target = ctx.account.resolveKey(ctx.region, text(ctx.body, 'TargetKeyId'), false);
    if (target.state === 'PendingDeletion') throw invalidState(target.arn);
    ctx.account.setAlias(ctx.region, name, target, true);
    return undefined;
  },

  UpdateAlias(ctx) {
    const name = text(ctx.body, 'AliasName');
    const target = ctx.account.resolveKey(ctx.region, text(ctx.body, 'TargetKeyId'), false);
    if (target.state === 'PendingDeletion') throw invalidState(target.arn);
    const current = ctx.account.alias(ctx.region, name);
    const old = current && ctx.account.keys.get(current.targetKeyId);
    if (old && (old.usage !== target.usage || (old.spec.kind === 'rsa') !== (target.spec.kind === 'rsa'))) {
      throw validation(`${old.arn} and ${target.arn} are not the same key type and key usage: an alias can be moved only between such keys.`);
    }
    ctx.account.setAlias(ctx.region, name, target, false);
    return undefined;
  },

  DeleteAlias(ctx) {
    const name = text(ctx.body, 'AliasName');
    if (!ctx.account.aliases.delete(`${ctx.region}/${name}`)) throw notFound(`Alias '${ctx.account.aliasArn(ctx.region, name)}' is not found.`);
    return undefined;
  },

  ListAliases(ctx) {
    const ref = optText(ctx.body, 'KeyId');
    const keyId = ref === undefined ? undefined : ctx.account.resolveKey(ctx.region, ref, false).id;
    const aliases = [...ctx.account.aliases.values()].filter((a) => a.region === ctx.region && (keyId === undefined || a.targetKeyId === keyId)).sort((a, b) => a.name.localeCompare(b.name));
    return page(ctx, aliases, 'Aliases', (a) => aliasEntry(ctx, a));
  },

  EnableKey(ctx) {
    const key = ctx.account.resolveKey(ctx.region, text(ctx.body, 'KeyId'), false);
    if (key.state === 'PendingDeletion') throw invalidState(key.arn);
    key.state = 'Enabled';
    return undefined;
  },

  DisableKey(ctx) {
    const key = ctx.account.resolveKey(ctx.region, text(ctx.body, 'KeyId'), false);
    if (key.state === 'PendingDeletion') throw invalidState(key.arn);
    key.state = 'Disabled';
    return undefined;
  },

  ScheduleKeyDeletion(ctx) {
    const key = ctx.account.resolveKey(ctx.region, text(ctx.body, 'KeyId'), false);
    const days = ctx.body.PendingWindowInDays === undefined ? 30 : Number(ctx.body.PendingWindowInDays);
    if (!Number.isInteger(days) || days < 7 || days > 30) {
      throw validation(`1 validation error detected: Value '${String(ctx.body.PendingWindowInDays)}' at 'pendingWindowInDays' failed to satisfy constraint: Member must have value between 7 and 30`);
    }
    if (key.state === 'PendingDeletion') throw invalidState(key.arn);
    key.state = 'PendingDeletion';
    key.deletionDate = Date.now() + days * 86_400_000;
    return { KeyId: key.arn, DeletionDate: epochSeconds(key.deletionDate), KeyState: key.state, PendingWindowInDays: days };
  },

  CancelKeyDeletion(ctx) {
    const key = ctx.account.resolveKey(ctx.region, text(ctx.body, 'KeyId'), false);
    if (key.state !== 'PendingDeletion') throw new KmsError(400, 'KMSInvalidStateException', `${key.arn} is not pending deletion.`);
    // A key whose deletion is cancelled comes back disabled.
    key.state = 'Disabled';
    delete key.deletionDate;
    return { KeyId: key.arn };
  },
};
