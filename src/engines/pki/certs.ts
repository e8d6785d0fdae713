// Which of the mount's issuers signed a certificate: revocation by PEM, CRL placement of entries
// without a known issuer, and tidy's issuer re-association all ask the same question.

import { parseCertificate, verifySignedBy, type ParsedCert } from '../../crypto/pki/certificate';
import { bytesEqual, fromBase64 } from '../../crypto/encoding';
import { issuerCert } from './authority';
import type { IssuerEntry } from './store';

export interface IssuerCert {
  entry: IssuerEntry;
  cert: ParsedCert;
}

/** Issuers with their parsed certificates (from authority's per-isolate cache: do not modify them). */
export const parsedIssuers = (issuers: IssuerEntry[]): IssuerCert[] => issuers.map((entry) => ({ entry, cert: issuerCert(entry) }));


/**
 * The issuers whose key verifies `child`'s signature. Like Go's CheckSignatureFrom only the
 * signature decides; issuers whose subject matches the child's issuer name are tried first.
 */
export async function signersOf(child: ParsedCert, issuers: IssuerCert[]): Promise<IssuerCert[]> {
  const named = (i: IssuerCert) => bytesEqual(child.issuerDer, i.cert.subjectDer);
  const ordered = [...issuers.filter(named), ...issuers.filter((i) => !named(i))];
  const out: IssuerCert[] = [];
  for (const i of ordered) if (await verifySignedBy(child, i.cert.spki)) out.push(i);
  return out;
}

/** The first issuer that signed `child`, or null. */
export async function signerOf(child: ParsedCert, issuers: IssuerCert[]): Promise<IssuerCert | null> {
  const named = (i: IssuerCert) => bytesEqual(child.issuerDer, i.cert.subjectDer);
  for (const i of [...issuers.filter(named), ...issuers.filter((i) => !named(i))]) {
    if (await verifySignedBy(child, i.cert.spki)) return i;
  }
  return null;
}

/** A stored base64 DER certificate, parsed. */
export function parseStoredCert(b64: string): ParsedCert {
  return parseCertificate(fromBase64(b64) ?? new Uint8Array(0));
}
