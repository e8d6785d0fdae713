// DER SEQUENCEs whose elements are already encoded: asn1js writes the tag and length around their
// concatenation. Encode-only. It keeps big CRLs out of one huge object tree, and lets a signed
// structure (certificate, CRL) wrap the TBS bytes it signed instead of serializing them again.

import * as asn1js from 'asn1js';
import { AsnConvert, BitString, type IAsnConvertible } from '@peculiar/asn1-schema';
import type { AlgorithmIdentifier } from '@peculiar/asn1-x509';

/**
 * A SEQUENCE whose elements are already DER-encoded: asn1js writes the tag and length around
 * their concatenation. Encode-only; this is what keeps big CRLs out of one huge object tree.
 */
export class EncodedSequence implements IAsnConvertible<asn1js.Primitive> {
  constructor(readonly content: Uint8Array = new Uint8Array(0)) {}
  toASN(): asn1js.Primitive {
    const block = new asn1js.Primitive({ valueHex: this.content });
    block.idBlock.tagClass = 1; // universal
    block.idBlock.tagNumber = 16; // SEQUENCE
    block.idBlock.isConstructed = true;
    return block;
  }
  fromASN(): this {
    throw new Error('EncodedSequence is encode-only');
  }
  toSchema(name: string): asn1js.BaseBlock {
    return new asn1js.Sequence({ name }); // asn1-schema builds parse schemas eagerly; never parsed with
  }
}

/** Joins DER chunks without spreading them into arguments (100k chunks overflow a call). */
export function joinChunks(chunks: Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let off = 0;
  for (const c of chunks) {
    out.set(c, off);
    off += c.length;
  }
  return out;
}

/** A signed structure (Certificate, CertificateList): SEQUENCE { tbs, signatureAlgorithm, signature }. */
export function signedDer(tbs: Uint8Array, algorithm: AlgorithmIdentifier, signature: ArrayBuffer | Uint8Array): Uint8Array {
  const sig = signature instanceof Uint8Array ? signature : new Uint8Array(signature);
  const parts = [tbs, new Uint8Array(AsnConvert.serialize(algorithm)), new Uint8Array(AsnConvert.serialize(new BitString(sig)))];
  return new Uint8Array(AsnConvert.serialize(new EncodedSequence(joinChunks(parts, parts.reduce((n, x) => n + x.length, 0)))));
}

export interface Tlv {
  tagClass: number; // 1 universal, 2 application, 3 context, 4 private
  tagNumber: number;
  constructed: boolean;
  start: number;
  contentStart: number;
  end: number;
}

/** Reads one definite-length TLV header with asn1js's own decoders, without decoding the content. */
export function readTlv(buf: Uint8Array, offset: number, limit: number): Tlv {
  const head = new asn1js.BaseBlock();
  const afterId = head.idBlock.fromBER(buf, offset, limit - offset);
  if (afterId < 0) throw new Error(`malformed DER tag: ${head.idBlock.error}`);
  const contentStart = head.lenBlock.fromBER(buf, afterId, limit - afterId);
  if (contentStart < 0) throw new Error(`malformed DER length: ${head.lenBlock.error}`);
  if (head.lenBlock.isIndefiniteForm) throw new Error('indefinite length is not DER');
  const end = contentStart + head.lenBlock.length;
  if (end > limit) throw new Error('DER element runs past its container');
  return { tagClass: head.idBlock.tagClass, tagNumber: head.idBlock.tagNumber, constructed: head.idBlock.isConstructed, start: offset, contentStart, end };
}


/** The elements inside `parent`, in order (each read with readTlv, so they must fill it exactly). */
export function* childrenOf(buf: Uint8Array, parent: Tlv): Generator<Tlv> {
  for (let off = parent.contentStart; off < parent.end; ) {
    const t = readTlv(buf, off, parent.end);
    yield t;
    off = t.end;
  }
}

/**
 * A non-negative big-endian integer's DER INTEGER content: no leading zero byte unless the next
 * byte's high bit would otherwise make it negative (X.690 8.3.2); zero is one zero byte.
 */
export function unsignedIntegerContent(bytes: Uint8Array): Uint8Array {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  const trimmed = bytes.subarray(start);
  if (trimmed.length === 0) return new Uint8Array(1);
  if ((trimmed[0] & 0x80) === 0) return trimmed;
  const padded = new Uint8Array(trimmed.length + 1);
  padded.set(trimmed, 1);
  return padded;
}

/** The content of one DER SEQUENCE (a Name, a SubjectPublicKeyInfo): what follows its tag and length. */
export function sequenceContent(der: Uint8Array): Uint8Array {
  const t = readTlv(der, 0, der.length);
  if (t.tagClass !== 1 || t.tagNumber !== 16 || t.end !== der.length) throw new Error('expected one DER SEQUENCE');
  return der.subarray(t.contentStart, t.end);
}

/** A DER SEQUENCE as an EncodedSequence, so it is written as-is. */
export const encodedSequenceOf = (der: Uint8Array): EncodedSequence => new EncodedSequence(sequenceContent(der));
