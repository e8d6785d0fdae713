// RGPs and EGPs in the SystemObject's storage: validated on write (the Sentinel text must parse,
// the level and paths must be valid) and handed out whole to the objects that enforce them.

import { fromBase64, strictUtf8 } from '../../../crypto/encoding';
import { badRequest } from '../../../framework/errors';
import { getJSON, putJSON, type Storage } from '../../../framework/storage';
import { SentinelSyntaxError } from '../errors';
import { parsePolicy } from '../parser';
import { egpPathList } from './egp-paths';
import { ENFORCEMENT_LEVELS, type EnforcementLevel, type GoverningSet, type StoredEgp, type StoredRgp } from './types';

export type GoverningKind = 'rgp' | 'egp';

const PREFIX: Record<GoverningKind, string> = { rgp: 'core/policies/rgp/', egp: 'core/policies/egp/' };
const VERSION_KEY = 'core/policies/governing-version';

/**
 * The policy text: base64 of a Sentinel policy is accepted (Vault's `policy` may be encoded to
 * avoid escaping). Decoding is kept only when the decoded text parses, since a short policy can
 * also be valid base64. Throws a 400 with line, column and what was expected.
 */
export function sentinelText(name: string, raw: unknown): string {
  const text = typeof raw === 'string' ? raw : '';
  if (text.trim() === '') throw badRequest("'policy' parameter not supplied or empty");
  const compact = text.replace(/[\r\n]/g, '');
  const bytes = /^[A-Za-z0-9+/=]+$/.test(compact) ? fromBase64(compact) : null;
  const decoded = bytes ? strictUtf8(bytes) : null;
  if (decoded !== null && parses(name, decoded)) return decoded;
  try {
    parsePolicy(text, name);
  } catch (e) {
    if (e instanceof SentinelSyntaxError) throw badRequest(`failed to parse policy: ${e.message}`);
    throw e;
  }
  return text;
}

function parses(name: string, text: string): boolean {
  try {
    parsePolicy(text, name);
    return true;
  } catch {
    return false;
  }
}

export function enforcementLevel(raw: unknown): EnforcementLevel {
  if (raw === undefined || raw === null || raw === '') throw badRequest('missing enforcement_level');
  const level = String(raw).trim().toLowerCase();
  if (!(ENFORCEMENT_LEVELS as readonly string[]).includes(level)) {
    throw badRequest(`unknown enforcement_level "${String(raw)}": use advisory, soft-mandatory or hard-mandatory`);
  }
  return level as EnforcementLevel;
}

export class GoverningStore {
  constructor(private readonly storage: Storage) {}

  async get(kind: 'rgp', name: string): Promise<StoredRgp | null>;
  async get(kind: 'egp', name: string): Promise<StoredEgp | null>;
  async get(kind: GoverningKind, name: string): Promise<StoredRgp | StoredEgp | null> {
    return getJSON<StoredRgp | StoredEgp>(this.storage, PREFIX[kind] + name);
  }

  async names(kind: GoverningKind): Promise<string[]> {
    return (await this.storage.list(PREFIX[kind])).filter((k) => !k.endsWith('/')).sort();
  }

  /** Validates and stores an RGP. `name` is already canonical. */
  async putRgp(name: string, fields: { policy: unknown; enforcement_level: unknown }): Promise<void> {
    const stored: StoredRgp = { name, policy: sentinelText(`rgp/${name}`, fields.policy), enforcement_level: enforcementLevel(fields.enforcement_level) };
    await putJSON(this.storage, PREFIX.rgp + name, stored);
    await this.bump();
  }

  /** Validates and stores an EGP. */
  async putEgp(name: string, fields: { policy: unknown; enforcement_level: unknown; paths: unknown }): Promise<void> {
    const policy = sentinelText(`egp/${name}`, fields.policy);
    const level = enforcementLevel(fields.enforcement_level);
    const paths = egpPathList(fields.paths);
    const stored: StoredEgp = { name, policy, enforcement_level: level, paths };
    await putJSON(this.storage, PREFIX.egp + name, stored);
    await this.bump();
  }

  async delete(kind: GoverningKind, name: string): Promise<void> {
    await this.storage.delete(PREFIX[kind] + name);
    await this.bump();
  }

  /** Every RGP and EGP, for the enforcing objects' caches. */
  async snapshot(): Promise<GoverningSet> {
    const rgps: StoredRgp[] = [];
    for (const name of await this.names('rgp')) {
      const p = await this.get('rgp', name);
      if (p) rgps.push(p);
    }
    const egps: StoredEgp[] = [];
    for (const name of await this.names('egp')) {
      const p = await this.get('egp', name);
      if (p) egps.push(p);
    }
    return { version: (await getJSON<number>(this.storage, VERSION_KEY)) ?? 0, rgps, egps };
  }

  private async bump(): Promise<void> {
    await putJSON(this.storage, VERSION_KEY, ((await getJSON<number>(this.storage, VERSION_KEY)) ?? 0) + 1);
  }
}
