// ECDSA signatures in DER (ECDSA-Sig-Value: SEQUENCE { r INTEGER, s INTEGER }) from the unsigned,
// fixed-width halves that WebCrypto, noble and cloud KMSs give (r‖s). The SEQUENCE is written once
// per pair of content lengths by asn1-schema (src/crypto/pki/der-template.ts); each signature's
// integers are copied into it. Writing it with the library every time cost ≈ 8 µs per signature
// (@peculiar/x509's formatter) or ≈ 18 (through bigints), ≈ 4% of a PKI issue; this costs < 1.

import { ECDSASigValue } from '@peculiar/asn1-ecc';
import { AsnConvert } from '@peculiar/asn1-schema';
import { EncodingCache, templated, type DerTemplate } from './pki/der-template';
import { unsignedIntegerContent } from './pki/encoded-sequence';

/** Content lengths vary little (P-256: 32 or 33 bytes, rarely fewer); 64 pairs cover every curve. */
const shapes = new EncodingCache<DerTemplate>(64);
const SLOTS = [{ path: [0] }, { path: [1] }];

const encodeSig = ([r, s]: Uint8Array[]): Uint8Array => new Uint8Array(AsnConvert.serialize(new ECDSASigValue({ r: r.slice().buffer, s: s.slice().buffer })));

/** DER of the signature whose r and s are these unsigned big-endian integers (of any width). */
export function ecdsaDer(r: Uint8Array, s: Uint8Array): Uint8Array {
  return templated(shapes, 'ecdsa-sig', SLOTS, [unsignedIntegerContent(r), unsignedIntegerContent(s)], encodeSig);
}

/** DER of a signature given as r‖s, each half `r‖s.length / 2` bytes. */
export function ecdsaDerFromRaw(raw: Uint8Array): Uint8Array {
  const half = raw.length >> 1;
  return ecdsaDer(raw.subarray(0, half), raw.subarray(half));
}
