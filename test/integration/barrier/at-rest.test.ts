// Invariant 1: nothing secret reaches Durable Object storage in plaintext. Every table of every
// object is searched for the secrets written through the API and for the root token.
import { env, listDurableObjectIds, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { api, initCluster } from '../../helpers/api';

function contains(haystack: Uint8Array, needle: Uint8Array): boolean {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

async function dumpObject(ns: DurableObjectNamespace, id: DurableObjectId): Promise<Uint8Array[]> {
  return runInDurableObject(ns.get(id), async (_o, state) => {
    const out: Uint8Array[] = [];
    const tables = state.storage.sql.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'").toArray();
    for (const { name } of tables) {
      if (name.startsWith('sqlite_')) continue;
      for (const row of state.storage.sql.exec(`SELECT * FROM "${name}"`).raw()) {
        for (const cell of row) {
          if (cell instanceof ArrayBuffer) out.push(new Uint8Array(cell));
          else if (cell !== null) out.push(new TextEncoder().encode(String(cell)));
        }
      }
    }
    return out;
  });
}

describe('data at rest', () => {
  it('holds no plaintext secret and no token in any Durable Object', async () => {
    const c = await initCluster();
    await api('POST', 'sys/mounts/secret', { token: c.root, body: { type: 'kv' } });
    const secrets = ['correct-horse-battery-staple', 'p@ssw0rd-in-cubbyhole'];
    await api('PUT', 'secret/app/creds', { token: c.root, body: { password: secrets[0] } });
    await api('PUT', 'cubbyhole/mine', { token: c.root, body: { password: secrets[1] } });
    expect((await api('GET', 'secret/app/creds', { token: c.root })).body.data.password).toBe(secrets[0]);

    const cells: Uint8Array[] = [];
    for (const ns of [env.SYSTEM, env.TOKENS, env.MOUNTS] as unknown as DurableObjectNamespace[]) {
      const ids = await listDurableObjectIds(ns);
      expect(ids.length).toBeGreaterThan(0);
      for (const id of ids) cells.push(...(await dumpObject(ns, id)));
    }
    expect(cells.length).toBeGreaterThan(10);
    // Control: storage keys are not secret (as in Vault), so the dump must find this path.
    expect(cells.some((cell) => contains(cell, new TextEncoder().encode('logical/app/creds')))).toBe(true);
    const needles = [...secrets, c.root, c.root.slice(4), ...c.recoveryKeys].map((s) => new TextEncoder().encode(s));
    for (const needle of needles) {
      expect(cells.some((cell) => contains(cell, needle)), new TextDecoder().decode(needle)).toBe(false);
    }
  });
});
