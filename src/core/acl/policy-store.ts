// ACL policies, stored in the SystemObject: named texts, validated on write. Every object that
// authorises requests fetches texts from here and compiles them (src/core/acl/cache.ts).

import { badRequest } from '../../framework/errors';
import { getJSON, putJSON, type Storage } from '../../framework/storage';
import { parsePolicy, PolicyError } from './policy';
import { DEFAULT_POLICY, IMMUTABLE_POLICIES, RESPONSE_WRAPPING_POLICY } from './builtin-policies';

interface Stored {
  name: string;
  policy: string;
}

const KEY = 'core/policies/acl/';

/** Vault lowercases policy names (and says so when it changed one). */
export function canonicalPolicyName(raw: string): { name: string; warning: string | null } {
  const name = raw.trim().toLowerCase();
  if (name === '') throw badRequest('policy name cannot be empty');
  if (!/^[a-z0-9_.@+-]+$/.test(name)) throw badRequest(`invalid policy name "${raw}": use letters, digits and . _ @ + -`);
  return { name, warning: name !== raw ? `policy name was converted to ${name}` : null };
}

/** Validates a policy text (base64 accepted); throws a 400 naming the problem. */
export function validatePolicyText(name: string, text: string): void {
  if (text.trim() === '') throw badRequest("'policy' parameter not supplied or empty");
  try {
    parsePolicy(name, text);
  } catch (e) {
    if (e instanceof PolicyError) throw badRequest(`failed to parse policy: ${e.message}`);
    throw e;
  }
}

export class PolicyStore {
  constructor(private readonly storage: Storage) {}

  /** Creates the default policy on first use of a cluster. */
  private async ensureDefault(): Promise<void> {
    if (!(await this.storage.get(`${KEY}default`))) await putJSON(this.storage, `${KEY}default`, { name: 'default', policy: DEFAULT_POLICY });
  }

  /** The text of a policy, or null when there is none. Root has no text. */
  async text(name: string): Promise<string | null> {
    if (name === 'root') return '';
    if (name === 'response-wrapping') return RESPONSE_WRAPPING_POLICY;
    if (name === 'default') await this.ensureDefault();
    return (await getJSON<Stored>(this.storage, KEY + name))?.policy ?? null;
  }

  async texts(names: string[]): Promise<Record<string, string | null>> {
    const out: Record<string, string | null> = {};
    for (const n of names) out[n] = await this.text(n);
    return out;
  }

  async put(name: string, text: string): Promise<void> {
    if (IMMUTABLE_POLICIES.includes(name)) throw badRequest(`cannot update "${name}" policy`);
    validatePolicyText(name, text);
    await putJSON(this.storage, KEY + name, { name, policy: text });
  }

  async delete(name: string): Promise<void> {
    if (IMMUTABLE_POLICIES.includes(name)) throw badRequest(`cannot delete "${name}" policy`);
    if (name === 'default') throw badRequest('cannot delete default policy');
    await this.storage.delete(KEY + name);
  }

  /** Every policy name, with "root" last (response-wrapping is never listed). */
  async names(): Promise<string[]> {
    await this.ensureDefault();
    return [...(await this.storage.list(KEY)), 'root'];
  }
}
