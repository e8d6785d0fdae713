// The barrier keyring: numbered terms, each a 256-bit AES key. New writes use the active term;
// older terms stay for decryption after sys/rotate.

import { fromBase64, fromUtf8, toBase64, utf8 } from '../../crypto/encoding';
import { randomBytes } from '../../crypto/random';
import { formatRFC3339Nano } from '../../framework/duration';

export interface KeyTerm {
  term: number;
  key: Uint8Array;
  installTime: string;
}

/** Structured-clonable form, for handing the keyring to other Durable Objects over RPC. */
export interface KeyringWire {
  activeTerm: number;
  terms: KeyTerm[];
}

export class Keyring {
  private readonly byTerm: Map<number, KeyTerm>;

  constructor(
    terms: KeyTerm[],
    readonly activeTerm: number,
  ) {
    this.byTerm = new Map(terms.map((t) => [t.term, t]));
    if (!this.byTerm.has(activeTerm)) throw new Error(`keyring has no active term ${activeTerm}`);
  }

  static generate(now = Date.now()): Keyring {
    return new Keyring([{ term: 1, key: randomBytes(32), installTime: formatRFC3339Nano(now) }], 1);
  }

  active(): KeyTerm {
    return this.byTerm.get(this.activeTerm)!;
  }

  term(n: number): KeyTerm | undefined {
    return this.byTerm.get(n);
  }

  /** A new keyring with a fresh active term; all old terms kept for decryption. */
  rotate(now = Date.now()): Keyring {
    const next = this.activeTerm + 1;
    return new Keyring([...this.byTerm.values(), { term: next, key: randomBytes(32), installTime: formatRFC3339Nano(now) }], next);
  }

  toWire(): KeyringWire {
    return { activeTerm: this.activeTerm, terms: [...this.byTerm.values()] };
  }

  static fromWire(w: KeyringWire): Keyring {
    return new Keyring(w.terms, w.activeTerm);
  }

  serialize(): Uint8Array {
    return utf8(
      JSON.stringify({
        active_term: this.activeTerm,
        keys: [...this.byTerm.values()].map((t) => ({ term: t.term, key: toBase64(t.key), install_time: t.installTime })),
      }),
    );
  }

  static deserialize(bytes: Uint8Array): Keyring {
    const j = JSON.parse(fromUtf8(bytes)) as { active_term: number; keys: { term: number; key: string; install_time: string }[] };
    return new Keyring(
      j.keys.map((k) => ({ term: k.term, key: fromBase64(k.key)!, installTime: k.install_time })),
      j.active_term,
    );
  }
}
