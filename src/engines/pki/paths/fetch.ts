// Authority information anyone may read (reference §1.2, §1.8; spec "Authority information"): the
// default issuer as cert/ca, ca, ca/pem and its chain (ca_chain, cert/ca_chain), any issuer as
// issuer/:ref/{json,der,pem}, stored certificates by serial (cert/:serial[/raw[/pem]]), and the
// authenticated LIST certs. Raw reads answer with the certificate bytes (204 when there is none) and
// honour If-Modified-Since (304) using the issuer's last modification time.

import { certPem, parseCertificate } from '../../../crypto/pki/certificate';
import { fromBase64 } from '../../../crypto/encoding';
import { nameRegex, type LogicalRequest, type LogicalResponse, type PathDef } from '../../../framework/backend';
import { notFound } from '../../../framework/errors';
import type { FieldData } from '../../../framework/fields';
import { caChain } from '../authority';
import { httpDate, notModifiedSince } from '../not-modified';
import { loadRevoked } from '../revoked-store';
import { CERTS_PREFIX, findIssuer, loadCert, resolveIssuerRef, type IssuerEntry } from '../store';

const DER_TYPE = 'application/pkix-cert';
const PEM_TYPE = 'application/pem-certificate-chain';

/** A 304 when the client already has the issuer's current certificate, else null. */
const notModified = (req: LogicalRequest, issuer: IssuerEntry | null, contentType: string): LogicalResponse | null =>
  issuer?.lastModified ? notModifiedSince(req, issuer.lastModified, contentType) : null;

function rawCert(issuer: IssuerEntry | null, pem: boolean, body: string | Uint8Array): LogicalResponse {
  const headers: Record<string, string> = issuer?.lastModified ? { 'Last-Modified': httpDate(issuer.lastModified) } : {};
  return { raw: { status: 200, body, contentType: pem ? PEM_TYPE : DER_TYPE, headers } };
}

const trimmedPem = (e: IssuerEntry): string => e.certificate.trim();

/** ca, ca/pem, cert/ca/raw, cert/ca/raw/pem: the default issuer's certificate, or 204 when there is none. */
async function rawDefaultCa(req: LogicalRequest, pem: boolean): Promise<LogicalResponse> {
  const issuer = await findIssuer(req.storage, 'default');
  const contentType = pem ? PEM_TYPE : DER_TYPE;
  const unchanged = notModified(req, issuer, contentType);
  if (unchanged) return unchanged;
  if (!issuer) return { raw: { status: 200, body: '', contentType } };
  return rawCert(issuer, pem, pem ? trimmedPem(issuer) : parseCertificate(issuer.certificate).der);
}

/** ca_chain (raw PEM, labelled pkix-cert as Vault does) and cert/ca_chain (JSON). */
async function caChainRead(req: LogicalRequest, f: FieldData): Promise<LogicalResponse> {
  const json = f.get<string>('prefix') !== '';
  if (json) {
    const issuer = await resolveIssuerRef(req.storage, 'default');
    const chain = (await caChain(req.storage, issuer)).join('\n');
    return { data: { certificate: chain, ca_chain: chain, revocation_time: 0, revocation_time_rfc3339: '' } };
  }
  const issuer = await findIssuer(req.storage, 'default');
  const chain = issuer ? (await caChain(req.storage, issuer)).join('\n') : '';
  return { raw: { status: 200, body: chain, contentType: DER_TYPE } };
}

/** cert/:serial: JSON with the revocation state; `ca` is the default issuer. */
async function certRead(req: LogicalRequest, f: FieldData): Promise<LogicalResponse> {
  const serial = f.get<string>('serial');
  if (serial.toLowerCase() === 'ca') {
    const issuer = await resolveIssuerRef(req.storage, 'default');
    const unchanged = notModified(req, issuer, 'application/json');
    if (unchanged) return unchanged;
    return { data: { certificate: trimmedPem(issuer), revocation_time: 0, revocation_time_rfc3339: '' } };
  }
  const entry = await loadCert(req.storage, serial);
  if (!entry) throw notFound();
  const data: Record<string, unknown> = { certificate: certPem(fromBase64(entry.certificate) ?? new Uint8Array(0)).trim(), revocation_time: 0, revocation_time_rfc3339: '' };
  const revoked = await loadRevoked(req.storage, serial);
  if (revoked) {
    data.revocation_time = revoked.revocationTime;
    data.revocation_time_rfc3339 = revoked.revocationTimeNanos;
    if (revoked.issuerId) data.issuer_id = revoked.issuerId;
  }
  return { data };
}

/** cert/:serial/raw[/pem]: the stored certificate itself (204 when unknown, as Vault). */
async function certRawRead(req: LogicalRequest, f: FieldData): Promise<LogicalResponse> {
  const serial = f.get<string>('serial');
  const pem = f.get<string>('pem') !== '';
  if (serial.toLowerCase() === 'ca') return await rawDefaultCa(req, pem);
  const entry = await loadCert(req.storage, serial);
  const der = entry ? fromBase64(entry.certificate) : null;
  if (!der) return { raw: { status: 200, body: '', contentType: pem ? PEM_TYPE : DER_TYPE } };
  return rawCert(null, pem, pem ? certPem(der).trim() : der);
}

/** issuer/:ref/json|der|pem. */
async function issuerRead(req: LogicalRequest, f: FieldData): Promise<LogicalResponse> {
  const kind = f.get<string>('kind');
  const ref = f.get<string>('issuer_ref').trim();
  const issuer = await resolveIssuerRef(req.storage, ref.toLowerCase() === 'default' ? 'default' : ref);
  const contentType = kind === 'pem' ? PEM_TYPE : kind === 'der' ? DER_TYPE : 'application/json';
  const unchanged = notModified(req, issuer, contentType);
  if (unchanged) return unchanged;
  if (kind === 'der') return rawCert(issuer, false, parseCertificate(issuer.certificate).der);
  if (kind === 'pem') return rawCert(issuer, true, trimmedPem(issuer));
  return {
    data: {
      certificate: trimmedPem(issuer),
      ca_chain: await caChain(req.storage, issuer),
      issuer_id: issuer.id,
      issuer_name: issuer.name,
      revocation_time: issuer.revocationTime,
      revocation_time_rfc3339: issuer.revocationTimeNanos,
    },
  };
}

const PAGE = 1000;

/** LIST certs: colon serials of the stored certificates, paged by `after` and `limit`. */
async function listCerts(req: LogicalRequest, f: FieldData): Promise<LogicalResponse> {
  const limit = f.get<number>('limit');
  const afterRaw = f.get<string>('after').trim().toLowerCase();
  let after = afterRaw ? CERTS_PREFIX + afterRaw.replace(/:/g, '-') : '';
  const keys: string[] = [];
  for (;;) {
    const want = limit > 0 ? Math.min(PAGE, limit - keys.length) : PAGE;
    if (want <= 0) break;
    const page = await req.storage.scan(CERTS_PREFIX, after, want);
    keys.push(...page);
    if (page.length < want) break;
    after = page[page.length - 1];
  }
  if (keys.length === 0) throw notFound();
  return { data: { keys: keys.map((k) => k.slice(CERTS_PREFIX.length).replace(/-/g, ':')) } };
}

const SERIAL = '(?<serial>[0-9A-Fa-f:-]+)';

export function fetchPaths(): PathDef[] {
  const serial = { type: 'string', description: 'Serial number, colon- or hyphen-separated hex ("ca": the default issuer)' } as const;
  return [
    {
      pattern: 'ca(?<pem>/pem)?',
      fields: { pem: { type: 'string', description: '"/pem" for PEM' } },
      summary: "The default issuer's certificate (DER, or PEM with /pem).",
      operations: { read: (req, f) => rawDefaultCa(req, f.get<string>('pem') !== '') },
    },
    {
      pattern: '(?<prefix>cert/)?ca_chain',
      fields: { prefix: { type: 'string', description: '"cert/" for the JSON form' } },
      summary: "The default issuer's chain (PEM, or JSON under cert/).",
      operations: { read: caChainRead },
    },
    {
      pattern: `cert/${SERIAL}`,
      fields: { serial },
      summary: 'A stored certificate (JSON), with its revocation state.',
      operations: { read: certRead },
    },
    {
      pattern: `cert/${SERIAL}/raw(?<pem>/pem)?`,
      fields: { serial, pem: { type: 'string', description: '"/pem" for PEM' } },
      summary: 'A stored certificate (DER, or PEM with /pem).',
      operations: { read: certRawRead },
    },
    {
      pattern: `issuer/${nameRegex('issuer_ref')}/(?<kind>json|der|pem)`,
      fields: {
        issuer_ref: { type: 'string', description: 'Issuer id, name, or "default"' },
        kind: { type: 'string', description: 'json, der or pem' },
      },
      summary: "An issuer's certificate (JSON with its chain, DER or PEM).",
      operations: { read: issuerRead },
    },
    {
      pattern: 'certs/?',
      fields: {
        after: { type: 'string', description: 'List serials after this one' },
        limit: { type: 'int', description: 'At most this many serials (0: all)' },
      },
      summary: 'List the serial numbers of stored certificates.',
      operations: { list: listCerts },
    },
  ];
}
