// One emulated account's KMS: its access keys, and per region its keys (real key pairs) and
// aliases. Keys are found the ways KMS accepts: key id, key ARN, alias name or alias ARN, in the
// region the request was signed for.
import { randomUUID } from 'node:crypto';
import { generateKey, type KeyPair } from './crypto';
import { alreadyExists, notFound, validation } from './errors';
import { encryptionAlgorithmsOf, KEY_SPECS, signingAlgorithmsOf, usagesOf, type Spec } from './specs';
import { DEFAULT_KMS_CREDENTIALS, KMS_ACCOUNT_ID, type EmulatorState, type KeyState, type KeyView, type ResetBody, type SeedCredential } from './types';

export interface Credential {
  accessKeyId: string;
  secretAccessKey: string;
  userName: string;
  allow: Set<string> | null;
}

export interface KmsKey {
  id: string;
  region: string;
  arn: string;
  specName: string;
  spec: Spec;
  usage: string;
  state: KeyState;
  description: string;
  /** Epoch milliseconds. */
  created: number;
  deletionDate?: number;
  pair: KeyPair;
}

export interface Alias {
  /** "alias/<name>". */
  name: string;
  region: string;
  targetKeyId: string;
  created: number;
  updated: number;
}

const KEY_ID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ARN_RE = /^arn:aws[a-z-]*:kms:([a-z0-9-]+):(\d{12}):(key|alias)\/(.+)$/;
export const ALIAS_NAME_RE = /^alias\/[a-zA-Z0-9/_-]{1,250}$/;

/** KMS answers dates as epoch seconds (a JSON number with a fraction). */
export const epochSeconds = (ms: number) => ms / 1000;

export class Account {
  accountId = KMS_ACCOUNT_ID;
  credentials = new Map<string, Credential>();
  keys = new Map<string, KmsKey>();
  /** By `${region}/${alias name}`. */
  aliases = new Map<string, Alias>();

  constructor() {
    this.reset({});
  }

  reset(body: ResetBody): void {
    this.accountId = body.accountId ?? KMS_ACCOUNT_ID;
    if (!/^\d{12}$/.test(this.accountId)) throw new Error(`bad accountId ${JSON.stringify(this.accountId)}`);
    this.credentials.clear();
    this.keys.clear();
    this.aliases.clear();
    for (const c of body.credentials ?? [DEFAULT_KMS_CREDENTIALS as SeedCredential]) {
      if (!c.accessKeyId || !c.secretAccessKey) throw new Error(`bad credential ${JSON.stringify(c.accessKeyId)}`);
      this.credentials.set(c.accessKeyId, { accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey, userName: c.userName ?? 'kms-user', allow: c.allow ? new Set(c.allow) : null });
    }
  }

  userArn = (c: Credential) => `arn:aws:iam::${this.accountId}:user/${c.userName}`;
  keyArn = (region: string, id: string) => `arn:aws:kms:${region}:${this.accountId}:key/${id}`;
  aliasArn = (region: string, name: string) => `arn:aws:kms:${region}:${this.accountId}:${name}`;

  async createKey(region: string, specName: string, usage: string, description: string): Promise<KmsKey> {
    const spec = KEY_SPECS[specName];
    if (!spec) {
      throw validation(`KeySpec ${specName} is not supported by this emulator: use one of ${Object.keys(KEY_SPECS).join(', ')}`);
    }
    if (!usagesOf(spec).includes(usage)) throw validation(`KeyUsage ${usage} is not compatible with KeySpec ${specName}.`);
    const id = randomUUID();
    const key: KmsKey = { id, region, arn: this.keyArn(region, id), specName, spec, usage, state: 'Enabled', description, created: Date.now(), pair: await generateKey(spec) };
    this.keys.set(id, key);
    return key;
  }

  /** The key a KeyId parameter names (any state); NotFoundException when there is none. */
  resolveKey(region: string, ref: string, allowAlias = true): KmsKey {
    const arn = ARN_RE.exec(ref);
    if (arn) {
      const [, r, account, kind, rest] = arn;
      if (r !== region || account !== this.accountId) throw notFound(`Invalid arn ${r !== region ? region : account}`);
      if (kind === 'key') return this.keyById(region, rest);
      if (!allowAlias) throw notFound(`Invalid keyId ${ref}`);
      return this.keyByAlias(region, `alias/${rest}`);
    }
    if (ref.startsWith('alias/')) {
      if (!allowAlias) throw notFound(`Invalid keyId ${ref}`);
      return this.keyByAlias(region, ref);
    }
    if (!KEY_ID_RE.test(ref)) throw notFound(`Invalid keyId ${ref}`);
    return this.keyById(region, ref);
  }

  private keyById(region: string, id: string): KmsKey {
    const key = this.keys.get(id);
    if (!key || key.region !== region) throw notFound(`Key '${this.keyArn(region, id)}' does not exist`);
    return key;
  }

  private keyByAlias(region: string, name: string): KmsKey {
    const alias = this.aliases.get(`${region}/${name}`);
    if (!alias) throw notFound(`Alias '${this.aliasArn(region, name)}' is not found.`);
    return this.keyById(region, alias.targetKeyId);
  }

  alias(region: string, name: string): Alias | undefined {
    return this.aliases.get(`${region}/${name}`);
  }

  setAlias(region: string, name: string, target: KmsKey, create: boolean): void {
    if (!ALIAS_NAME_RE.test(name)) throw validation(`1 validation error detected: Value '${name}' at 'aliasName' failed to satisfy constraint: Member must satisfy regular expression pattern: ^alias/[a-zA-Z0-9/_-]+$`);
    if (name.startsWith('alias/aws/')) throw validation(`Alias ${name} is reserved: names beginning with alias/aws/ belong to AWS managed keys.`);
    const existing = this.alias(region, name);
    const now = Date.now();
    if (create) {
      if (existing) throw alreadyExists(`An alias with the name ${this.aliasArn(region, name)} already exists`);
      this.aliases.set(`${region}/${name}`, { name, region, targetKeyId: target.id, created: now, updated: now });
      return;
    }
    if (!existing) throw notFound(`Alias '${this.aliasArn(region, name)}' is not found.`);
    existing.targetKeyId = target.id;
    existing.updated = now;
  }

  aliasesOf(key: KmsKey): string[] {
    return [...this.aliases.values()].filter((a) => a.region === key.region && a.targetKeyId === key.id).map((a) => a.name);
  }

  /** DescribeKey's (and CreateKey's) KeyMetadata. */
  metadata(key: KmsKey): Record<string, unknown> {
    return {
      AWSAccountId: this.accountId,
      KeyId: key.id,
      Arn: key.arn,
      CreationDate: epochSeconds(key.created),
      Enabled: key.state === 'Enabled',
      Description: key.description,
      KeyUsage: key.usage,
      KeyState: key.state,
      ...(key.deletionDate !== undefined ? { DeletionDate: epochSeconds(key.deletionDate) } : {}),
      Origin: 'AWS_KMS',
      KeyManager: 'CUSTOMER',
      CustomerMasterKeySpec: key.specName,
      KeySpec: key.specName,
      ...(key.usage === 'ENCRYPT_DECRYPT' ? { EncryptionAlgorithms: encryptionAlgorithmsOf(key.spec, key.usage) } : {}),
      ...(key.usage === 'SIGN_VERIFY' ? { SigningAlgorithms: signingAlgorithmsOf(key.spec, key.usage) } : {}),
      ...(key.usage === 'KEY_AGREEMENT' ? { KeyAgreementAlgorithms: ['ECDH'] } : {}),
      MultiRegion: false,
    };
  }

  view(key: KmsKey): KeyView {
    return {
      KeyId: key.id,
      Arn: key.arn,
      Region: key.region,
      KeySpec: key.specName,
      KeyUsage: key.usage,
      KeyState: key.state,
      Description: key.description,
      CreationDate: new Date(key.created).toISOString(),
      Aliases: this.aliasesOf(key),
      PublicKey: key.pair.spki.toString('base64'),
    };
  }

  snapshot(): EmulatorState {
    return {
      accountId: this.accountId,
      credentials: [...this.credentials.values()].map((c) => ({ accessKeyId: c.accessKeyId, userName: c.userName, allow: c.allow ? [...c.allow] : null })),
      keys: [...this.keys.values()].sort((a, b) => a.created - b.created).map((k) => this.view(k)),
    };
  }
}
