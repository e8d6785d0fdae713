// The token store's persistence: tokens keyed by HMAC-SHA256(salt, token) under a barrier-protected
// salt, and accessors pointing at those HMACs. Pure logic over Storage.
//
// Live entries are also kept in memory, keyed by token: the shard owns every write to its tokens,
// so the cache is coherent, and it saves the HMAC, the read and the decryption on every request.
// Memory holds nothing the keyring in the same memory would not already unlock.

import { toHex } from '../crypto/encoding';
import { hmacSha256 } from '../crypto/hmac';
import { randomBytes } from '../crypto/random';
import { getJSON, putJSON, type Storage } from '../framework/storage';
import { newAccessor, rootTokenEntry, type TokenEntry } from './tokens';

const SALT_KEY = 'salt';
const CACHE_LIMIT = 10_000;

export class TokenStore {
  private salt: Uint8Array | null = null;
  private readonly cache = new Map<string, TokenEntry>();

  constructor(private readonly storage: Storage) {}

  private async getSalt(create: boolean): Promise<Uint8Array | null> {
    if (this.salt) return this.salt;
    let salt = await this.storage.get(SALT_KEY);
    if (!salt && create) {
      salt = randomBytes(32);
      await this.storage.put(SALT_KEY, salt);
    }
    this.salt = salt;
    return salt;
  }

  /** Forgets everything held in memory (after a seal or a keyring change). */
  reset(): void {
    this.salt = null;
    this.cache.clear();
  }

  private remember(token: string, entry: TokenEntry): void {
    if (this.cache.size >= CACHE_LIMIT) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(token, entry);
  }

  private async hash(token: string, create: boolean): Promise<string | null> {
    const salt = await this.getSalt(create);
    return salt ? toHex(await hmacSha256(salt, token)) : null;
  }

  async createRoot(token: string, now = Date.now()): Promise<TokenEntry> {
    const hash = (await this.hash(token, true))!;
    if (await this.storage.get(`tokens/${hash}`)) throw new Error('token already exists');
    const entry = rootTokenEntry(newAccessor(), now);
    await putJSON(this.storage, `tokens/${hash}`, entry);
    await putJSON(this.storage, `accessors/${entry.accessor}`, { hash });
    this.remember(token, entry);
    return entry;
  }

  /** Deletes a token and its accessor; returns the entry it had, or null when there was none. */
  async revoke(token: string): Promise<TokenEntry | null> {
    const hash = await this.hash(token, false);
    this.cache.delete(token);
    if (!hash) return null;
    const entry = await getJSON<TokenEntry>(this.storage, `tokens/${hash}`);
    if (!entry) return null;
    await this.storage.delete(`tokens/${hash}`);
    await this.storage.delete(`accessors/${entry.accessor}`);
    return entry;
  }

  /** The live entry for a token, or null when unknown or expired. */
  async lookup(token: string, now = Date.now()): Promise<TokenEntry | null> {
    let entry = this.cache.get(token) ?? null;
    if (!entry) {
      const hash = await this.hash(token, false);
      if (!hash) return null;
      entry = await getJSON<TokenEntry>(this.storage, `tokens/${hash}`);
      if (!entry) return null;
      this.remember(token, entry);
    }
    if (entry.expireTime !== null && entry.expireTime <= now) return null;
    return entry;
  }
}
