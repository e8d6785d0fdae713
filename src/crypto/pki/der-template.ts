// Encodings that repeat from one certificate or key to the next, remembered per isolate. The
// library (asn1-schema over asn1js) still writes every byte of structure: these only keep what it
// wrote. Whole values (a subject, a SAN extension, a validity) are kept by what they encode;
// templates are a shape encoded once with placeholder contents, which each value's own bytes are
// copied over. Encoding is most of what issuing a certificate costs in JavaScript (asn1js takes
// ≈ 5 µs for one OID). Nothing kept is secret: a template holds placeholders, never a value's
// bytes, so a private key copied into one (a generated key's SEC1) is only in the copy returned.

import { childrenOf, readTlv } from './encoded-sequence';

/** A Map of encodings bounded to `max` entries, dropping the oldest first. */
export class EncodingCache<V> {
  readonly #entries = new Map<string, V>();
  constructor(readonly max: number) {}

  /** The entry for `key`, made by `make` (and kept) the first time. */
  get(key: string, make: () => V): V {
    let v = this.#entries.get(key);
    if (v === undefined) {
      v = make();
      if (this.#entries.size >= this.max) this.#entries.delete(this.#entries.keys().next().value as string);
      this.#entries.set(key, v);
    }
    return v;
  }
}

/**
 * Where a variable part goes: the content of the element reached by `path` (child indexes, each
 * into the previous element's content, the first into the outermost element's), after `skip`
 * bytes (a BIT STRING's unused-bits byte).
 */
export interface Slot {
  path: readonly number[];
  skip?: number;
}

/** A shape's encoding and where each of its parts goes in it. */
export interface DerTemplate {
  der: Uint8Array;
  at: number[];
}

/**
 * The encoding of `parts` in a shape: `encode` is called once per shape (the lengths of the parts
 * under `shape`) with placeholders of the parts' lengths, and each slot's place found in what it
 * wrote; every later call copies the parts over a copy of that. The result is byte for byte what
 * `encode(parts)` would write, provided the encoding's structure depends only on the parts'
 * lengths (a slot's content must hold the part verbatim, which is checked when the shape is made).
 */
export function templated(
  cache: EncodingCache<DerTemplate>,
  shape: string,
  slots: readonly Slot[],
  parts: readonly Uint8Array[],
  encode: (placeholders: Uint8Array[]) => Uint8Array,
): Uint8Array {
  let key = shape;
  for (const p of parts) key += `|${p.length}`;
  const t = cache.get(key, () => {
    // Non-zero placeholders: an INTEGER's leading zero bytes could be written differently.
    const der = encode(parts.map((p) => new Uint8Array(p.length).fill(1)));
    return { der, at: slots.map((s, i) => slotOffset(der, s, parts[i].length)) };
  });
  const out = t.der.slice();
  for (let i = 0; i < parts.length; i++) out.set(parts[i], t.at[i]);
  return out;
}

/** Where the slot's part begins in `der`; throws unless exactly `length` bytes are there for it. */
function slotOffset(der: Uint8Array, slot: Slot, length: number): number {
  let el = readTlv(der, 0, der.length);
  for (const index of slot.path) {
    const child = [...childrenOf(der, el)][index];
    if (!child) throw new Error("DER template: a slot's path leads to no element");
    el = child;
  }
  const start = el.contentStart + (slot.skip ?? 0);
  if (el.end - start !== length) throw new Error('DER template: a part does not fill its slot');
  return start;
}
