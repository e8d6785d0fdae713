import { describe, expect, it } from 'vitest';
import { BarrierError, BarrierStorage, type KeyringSource } from '../../../../src/core/barrier/barrier';
import { Keyring } from '../../../../src/core/barrier/keyring';
import { MemoryPhysical } from '../../../../src/core/barrier/physical';
import { fromUtf8, toHex, utf8 } from '../../../../src/crypto/encoding';
import { CofferError, sealedError } from '../../../../src/framework/errors';

function setup(initial = Keyring.generate()) {
  const state = { ring: initial, refreshes: 0, sealed: false };
  const keys: KeyringSource = {
    get: async () => {
      if (state.sealed) throw sealedError();
      return state.ring;
    },
    refresh: async () => {
      state.refreshes++;
      return state.ring;
    },
  };
  const physical = new MemoryPhysical();
  return { state, physical, barrier: new BarrierStorage(physical, keys, 1024) };
}

describe('BarrierStorage', () => {
  it('stores only ciphertext, framed with the term and format version', async () => {
    const { physical, barrier } = setup();
    await barrier.put('secret/db', utf8('hunter2-plaintext'));
    const raw = physical.get('secret/db')!;
    expect(fromUtf8(raw)).not.toContain('hunter2');
    expect(toHex(raw.subarray(0, 5))).toBe('0000000101'); // term 1, version 1
    expect(raw.length).toBe(5 + 12 + 'hunter2-plaintext'.length + 16);
    expect(fromUtf8((await barrier.get('secret/db'))!)).toBe('hunter2-plaintext');
  });

  it('binds each value to its key: a value copied to another key does not decrypt', async () => {
    const { physical, barrier } = setup();
    await barrier.put('a', utf8('x'));
    physical.apply([{ key: 'b', value: physical.get('a') }]);
    await expect(barrier.get('b')).rejects.toBeInstanceOf(BarrierError);
  });

  it('skips decrypting a value whose stored bytes are unchanged, but still refuses once sealed', async () => {
    const { state, physical, barrier } = setup();
    await barrier.put('a', utf8('x'));
    const sealed = physical.get('a')!;
    // The same bytes under another key's name never come back from the cache: the key is the AAD.
    physical.apply([{ key: 'b', value: sealed }]);
    await expect(barrier.get('b')).rejects.toBeInstanceOf(BarrierError);
    expect(fromUtf8((await barrier.get('a'))!)).toBe('x');
    // The copy handed out is the caller's.
    const first = (await barrier.get('a'))!;
    first[0] = 0x79;
    expect(fromUtf8((await barrier.get('a'))!)).toBe('x');
    // Changed bytes (here a tampered value written behind the barrier's back) are opened again.
    const tampered = sealed.slice();
    tampered[tampered.length - 1] ^= 1;
    physical.apply([{ key: 'a', value: tampered }]);
    await expect(barrier.get('a')).rejects.toThrow('failed to decrypt');
    physical.apply([{ key: 'a', value: sealed }]);
    expect(fromUtf8((await barrier.get('a'))!)).toBe('x');
    // Sealed: the keyring source throws, and so does every read, remembered or not.
    state.sealed = true;
    await expect(barrier.get('a')).rejects.toBeInstanceOf(CofferError);
  });

  it('detects tampering', async () => {
    const { physical, barrier } = setup();
    await barrier.put('a', utf8('x'));
    const raw = physical.get('a')!.slice();
    raw[raw.length - 1] ^= 1;
    physical.apply([{ key: 'a', value: raw }]);
    await expect(barrier.get('a')).rejects.toThrow('failed to decrypt');
  });

  it('keeps old terms readable after rotation and writes with the new term', async () => {
    const { state, physical, barrier } = setup();
    await barrier.put('old', utf8('1'));
    state.ring = state.ring.rotate();
    await barrier.put('new', utf8('2'));
    expect(physical.get('old')![3]).toBe(1);
    expect(physical.get('new')![3]).toBe(2);
    expect(fromUtf8((await barrier.get('old'))!)).toBe('1');
    expect(fromUtf8((await barrier.get('new'))!)).toBe('2');
  });

  it('refreshes the keyring when a value names a term it does not know yet', async () => {
    const writer = setup();
    await writer.barrier.put('k', utf8('v'));
    writer.state.ring = writer.state.ring.rotate();
    await writer.barrier.put('k2', utf8('v2'));
    // A reader that still holds the older keyring.
    let current = Keyring.fromWire({ activeTerm: 1, terms: [writer.state.ring.term(1)!] });
    let refreshed = 0;
    const reader = new BarrierStorage(writer.physical, {
      get: async () => current,
      refresh: async () => {
        refreshed++;
        current = writer.state.ring;
        return current;
      },
    });
    expect(fromUtf8((await reader.get('k2'))!)).toBe('v2');
    expect(refreshed).toBe(1);
  });

  it('refuses values over the entry size limit with a 413 and writes nothing', async () => {
    const { physical, barrier } = setup();
    const err = await barrier.applyBatch([{ key: 'ok', value: utf8('x') }, { key: 'big', value: new Uint8Array(1025) }]).catch((e) => e);
    expect(err).toBeInstanceOf(CofferError);
    expect(err.status).toBe(413);
    expect(err.errors[0]).toBe('put failed due to value being too large; got 1025 bytes, max: 1024 bytes');
    expect(physical.data.size).toBe(0);
  });

  it('cannot read or write while the keyring is unavailable (sealed)', async () => {
    const physical = new MemoryPhysical();
    const refuse = async (): Promise<Keyring> => {
      throw sealedError();
    };
    const sealed = new BarrierStorage(physical, { get: refuse, refresh: refuse });
    await expect(sealed.put('a', utf8('x'))).rejects.toMatchObject({ status: 503 });
    physical.apply([{ key: 'a', value: new Uint8Array([0, 0, 0, 1, 1, ...new Uint8Array(28)]) }]);
    await expect(sealed.get('a')).rejects.toMatchObject({ status: 503 });
    // Deleting needs no key.
    await sealed.delete('a');
    expect(physical.get('a')).toBeNull();
  });

  it('peek answers without waiting only what get would answer: absent keys, and values opened under current keys', async () => {
    const physical = new MemoryPhysical();
    const ring = Keyring.generate();
    const state = { current: true as boolean };
    const keys: KeyringSource = { get: async () => ring, refresh: async () => ring, current: () => (state.current ? ring : null) };
    const barrier = new BarrierStorage(physical, keys);
    expect(barrier.peek('a')).toBeNull();
    await barrier.put('a', utf8('one'));
    expect(fromUtf8(barrier.peek('a')!)).toBe('one');
    // Keys no longer current (sealed, or not confirmed lately): get must ask, so peek does not answer.
    state.current = false;
    expect(barrier.peek('a')).toBeUndefined();
    expect(barrier.peek('missing')).toBeNull();
    state.current = true;
    // Stored bytes that differ from the opened ones (another writer, a restore): never the old value.
    const other = new BarrierStorage(physical, keys);
    await other.put('a', utf8('two'));
    expect(barrier.peek('a')).toBeUndefined();
    expect(fromUtf8((await barrier.get('a'))!)).toBe('two');
    expect(fromUtf8(barrier.peek('a')!)).toBe('two');
    // A keyring source that cannot tell: always ask get.
    const plain = new BarrierStorage(physical, { get: async () => ring, refresh: async () => ring });
    await plain.get('a');
    expect(plain.peek('a')).toBeUndefined();
  });

  it('refuses unknown entry formats', async () => {
    const { physical, barrier } = setup();
    physical.apply([{ key: 'a', value: new Uint8Array([0, 0, 0, 1, 9, 1, 2, 3]) }]);
    await expect(barrier.get('a')).rejects.toThrow('unsupported entry format');
  });
});

describe('Keyring', () => {
  it('serialises and restores every term', () => {
    const ring = Keyring.generate().rotate().rotate();
    const back = Keyring.deserialize(ring.serialize());
    expect(back.activeTerm).toBe(3);
    for (const t of [1, 2, 3]) expect(back.term(t)!.key).toEqual(ring.term(t)!.key);
    expect(Keyring.fromWire(ring.toWire()).active().key).toEqual(ring.active().key);
  });
});
