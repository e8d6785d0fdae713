// Transit survives kill -9 in the middle of a burst: rotations (with encrypts racing them), BYOK
// imports and backup restores. After the restart everything acknowledged is there, every key
// is whole (all its versions, usable), and a key whose creation was cut off is absent or whole.
import { createCipheriv, createDecipheriv, constants, publicEncrypt, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { burst, client, restart, statusOf, type Client } from './crash';
import { startLauncher, tempDir, type Server } from './processes';

const ROOT_TOKEN = 'hvs.e2eRootTokenForCrashTransit0';
const b64 = (b: Buffer | string) => Buffer.from(b).toString('base64');

let dir: string;
let server: Server;
let vault: Client;

beforeAll(async () => {
  dir = tempDir('coffer-e2e-crash-transit-');
  server = await startLauncher(dir, { COFFER_DEV_ROOT_TOKEN: ROOT_TOKEN });
  vault = client(server, ROOT_TOKEN);
  await vault.mount({ mount_point: 'transit', type: 'transit' });
});
afterAll(async () => {
  await server?.stop('SIGTERM');
});

async function crashAndRestart<T>(workers: number, afterMs: number, op: (n: number) => Promise<T>) {
  const result = await burst(server, workers, afterMs, op);
  server = await restart(dir);
  vault = client(server, ROOT_TOKEN);
  expect(result.refused).toEqual([]);
  expect(result.acked.length).toBeGreaterThan(3);
  return result;
}

/** Decrypts a transit ciphertext of a non-derived AES-256-GCM key locally: vault:vN:base64(nonce | ct | tag). */
function decryptLocally(key: Buffer, ciphertext: string): Buffer {
  const raw = Buffer.from(ciphertext.split(':')[2], 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(raw.length - 16));
  return Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]);
}

/** A key whose creation may have been cut off: absent, or whole (readable and usable). */
async function absentOrWhole(name: string, check: (name: string) => Promise<void>): Promise<void> {
  const status = await statusOf(() => vault.read(`transit/keys/${name}`));
  expect([200, 404], name).toContain(status);
  if (status === 200) await check(name);
}

describe('transit under kill -9', () => {
  it('rotations and the encrypts racing them: every acknowledged version and ciphertext survives', async () => {
    await vault.write('transit/keys/rot', { type: 'aes256-gcm96' });
    type Ack = { kind: 'rotate'; version: number } | { kind: 'encrypt'; plaintext: string; ciphertext: string };
    const { acked } = await crashAndRestart<Ack>(6, 800, async (n) => {
      if (n % 3 === 0) {
        const r = await vault.write('transit/keys/rot/rotate', {});
        return { kind: 'rotate', version: r.data.latest_version as number };
      }
      const plaintext = b64(`message ${n}`);
      const r = await vault.write('transit/encrypt/rot', { plaintext });
      return { kind: 'encrypt', plaintext, ciphertext: r.data.ciphertext as string };
    });

    const key = (await vault.read('transit/keys/rot')).data;
    const rotations = acked.filter((a) => a.kind === 'rotate');
    expect(rotations.length).toBeGreaterThan(0);
    expect(key.latest_version).toBeGreaterThanOrEqual(Math.max(...rotations.map((a) => a.version)));
    // Every version from 1 to the latest is there: none half-added.
    expect(Object.keys(key.keys).map(Number).sort((a, b) => a - b)).toEqual(Array.from({ length: key.latest_version }, (_, i) => i + 1));
    for (const a of acked) {
      if (a.kind !== 'encrypt') continue;
      expect((await vault.write('transit/decrypt/rot', { ciphertext: a.ciphertext })).data.plaintext).toBe(a.plaintext);
    }
    const fresh = await vault.write('transit/encrypt/rot', { plaintext: b64('after') });
    expect(fresh.data.ciphertext).toMatch(new RegExp(`^vault:v${key.latest_version}:`));
  });

  it('BYOK imports: every acknowledged key holds exactly the material imported', async () => {
    const wrappingPem = (await vault.read('transit/wrapping_key')).data.public_key as string;
    const material = new Map<number, Buffer>();
    const wrap = (key: Buffer): string => {
      const ephemeral = randomBytes(32);
      const kwp = createCipheriv('id-aes256-wrap-pad', ephemeral, Buffer.from('a65959a6', 'hex'));
      const wrapped = Buffer.concat([kwp.update(key), kwp.final()]);
      const sealed = publicEncrypt({ key: wrappingPem, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, ephemeral);
      return b64(Buffer.concat([sealed, wrapped]));
    };
    const { acked, sent } = await crashAndRestart(4, 800, async (n) => {
      const key = randomBytes(32);
      material.set(n, key);
      await vault.write(`transit/keys/imp-${n}/import`, { ciphertext: wrap(key), type: 'aes256-gcm96', hash_function: 'SHA256' });
      return n;
    });

    const usesMaterial = async (name: string) => {
      const n = Number(name.slice('imp-'.length));
      const ct = (await vault.write(`transit/encrypt/${name}`, { plaintext: b64('imported') })).data.ciphertext as string;
      expect(decryptLocally(material.get(n)!, ct).toString()).toBe('imported');
    };
    for (const n of acked) await usesMaterial(`imp-${n}`);
    const ackedSet = new Set(acked);
    for (let n = 0; n < sent; n++) if (!ackedSet.has(n)) await absentOrWhole(`imp-${n}`, usesMaterial);
  });

  it('restores: every acknowledged restore decrypts what the backed-up key encrypted', async () => {
    await vault.write('transit/keys/src', { type: 'aes256-gcm96', exportable: true, allow_plaintext_backup: true });
    await vault.write('transit/keys/src/rotate', {});
    const ciphertexts = [
      (await vault.write('transit/encrypt/src', { plaintext: b64('v2 secret') })).data.ciphertext as string,
      (await vault.write('transit/encrypt/src', { plaintext: b64('v1 secret'), key_version: 1 })).data.ciphertext as string,
    ];
    const backup = (await vault.read('transit/backup/src')).data.backup as string;
    const { acked, sent } = await crashAndRestart(4, 700, async (n) => {
      await vault.write(`transit/restore/res-${n}`, { backup });
      return n;
    });

    const decryptsBoth = async (name: string) => {
      const plain = await Promise.all(ciphertexts.map(async (ciphertext) => Buffer.from((await vault.write(`transit/decrypt/${name}`, { ciphertext })).data.plaintext, 'base64').toString()));
      expect(plain).toEqual(['v2 secret', 'v1 secret']);
    };
    for (const n of acked) await decryptsBoth(`res-${n}`);
    const ackedSet = new Set(acked);
    for (let n = 0; n < sent; n++) if (!ackedSet.has(n)) await absentOrWhole(`res-${n}`, decryptsBoth);
  });
});
