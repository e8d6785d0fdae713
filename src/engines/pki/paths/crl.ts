// Every CRL read of the spec's CRL table (complete/delta, local/unified, JSON/DER/PEM) and the
// rotation paths. Reads first bring stale CRLs up to date (they are "writing reads"), then answer
// from the stored CRL, honouring If-Modified-Since against the CRL's build time. Coffer has no
// cross-cluster revocations, so the unified CRLs are the local ones.

import { buildCrl, parseCrl, type CrlEntry, type ParsedCrl } from '../../../crypto/pki/crl';
import { subjectKeyId, verifySignature } from '../../../crypto/pki/keys';
import { serialFromBytes } from '../../../crypto/pki/serial';
import { pemBlocks, toPem } from '../../../crypto/pem';
import { fromHex, toBase64 } from '../../../crypto/encoding';
import { nameRegex, type LogicalRequest, type LogicalResponse, type PathDef } from '../../../framework/backend';
import { DurationError, parseDurationSeconds } from '../../../framework/duration';
import { asCofferError, badRequest, CofferError, notFound } from '../../../framework/errors';
import type { FieldData } from '../../../framework/fields';
import { signingIssuer, type SigningIssuer } from '../authority';
import { crlIdOf, crlSigner, freshenCrls, readCrl, rebuildWarnings, rotateCrls, rotateDeltaCrls, type CrlKind } from '../crl-store';
import { loadCrlConfig } from '../crl-config';
import { httpDate, notModifiedSince } from '../not-modified';
import { requestKeyAccess, type KeyAccess } from '../signers';
import { findIssuer, resolveIssuerRef, type IssuerEntry } from '../store';
import type { ManagedKeyAccess } from '../../../managed-keys/access';

const DER_TYPE = 'application/pkix-crl';
const PEM_TYPE = 'application/x-pem-file';

type Form = 'json' | 'der' | 'pem';

interface CrlRequest {
  /** null: the legacy paths (crl, cert/crl, ...), which serve the default issuer's CRL. */
  issuerRef: string | null;
  kind: CrlKind;
  form: Form;
}

const emptyRaw = (contentType: string): LogicalResponse => ({ raw: { status: 200, body: '', contentType } });

async function serveCrl(req: LogicalRequest, r: CrlRequest, access: KeyAccess): Promise<LogicalResponse> {
  const now = Date.now();
  await freshenCrls(req.storage, now, access);
  const contentType = r.form === 'der' ? DER_TYPE : r.form === 'pem' ? PEM_TYPE : 'application/json';
  const legacy = r.issuerRef === null;

  let issuer: IssuerEntry | null;
  if (legacy) {
    issuer = await findIssuer(req.storage, 'default');
    if (!issuer) {
      if (r.form !== 'json') return emptyRaw(contentType);
      throw badRequest('no default issuer currently configured');
    }
  } else {
    issuer = await resolveIssuerRef(req.storage, r.issuerRef!);
  }
  const crlId = await crlIdOf(req.storage, issuer.id);
  if (!crlId) {
    // An issuer without a key (or whose set lacks CRL signing) has no CRL.
    if (legacy && r.form !== 'json') return emptyRaw(contentType);
    throw badRequest(`unable to find CRL for issuer: id:${issuer.id}/ref:${r.issuerRef ?? 'default'}`);
  }
  const stored = await readCrl(req.storage, crlId, r.kind);
  if (!stored) {
    // No delta CRL is built while delta CRLs are off.
    if (r.form !== 'json') return emptyRaw(contentType);
    if (legacy) throw notFound();
    return { data: { crl: '' } };
  }
  const unchanged = notModifiedSince(req, stored.meta.builtAt, contentType);
  if (unchanged) return unchanged;
  const headers = { 'Last-Modified': httpDate(stored.meta.builtAt) };
  // The issuer paths send Go's PEM encoding as is (trailing newline); the legacy ones trim it.
  const pem = legacy ? toPem('X509 CRL', stored.der).trim() : toPem('X509 CRL', stored.der);
  if (r.form === 'der') return { raw: { status: 200, body: stored.der, contentType, headers } };
  if (r.form === 'pem') return { raw: { status: 200, body: pem, contentType, headers } };
  if (legacy) return { data: { certificate: pem, revocation_time: 0, revocation_time_rfc3339: '' } };
  return { data: { crl: pem } };
}

/** The groups of a path pattern, matched against the request's (mount-relative) path. */
function groups(pattern: string, path: string): Record<string, string | undefined> {
  return new RegExp(`^(?:${pattern})$`).exec(path)?.groups ?? {};
}

// ---- issuer/:ref/resign-crls and issuer/:ref/sign-revocation-list ----

interface SignParams {
  issuer: SigningIssuer;
  number: number;
  deltaBase: number;
  nextUpdate: number;
  der: boolean;
}

/** The parameters both signing paths share, checked in Vault's order with its messages. */
async function signParams(req: LogicalRequest, f: FieldData, access: KeyAccess): Promise<SignParams> {
  const format = f.get<string>('format').toLowerCase();
  if (format !== 'pem' && format !== 'der') throw badRequest(`unknown format value of ${f.get<string>('format')}`);
  let nextUpdate: number;
  try {
    nextUpdate = parseDurationSeconds(f.get<string>('next_update'));
  } catch (e) {
    throw badRequest(`invalid value for next_update: ${e instanceof DurationError ? e.message : String(e)}`);
  }
  if (nextUpdate <= 0) throw badRequest('next_update parameter must be greater than 0');
  const number = f.get<number>('crl_number');
  if (number < 0) throw badRequest('crl_number parameter must be 0 or greater');
  const deltaBase = f.get<number>('delta_crl_base_number');
  if (deltaBase < -1) throw badRequest('delta_crl_base_number parameter must be -1 or greater');
  const ref = f.get<string>('issuer_ref');
  if (ref === '') throw badRequest('issuer_ref parameter cannot be blank');
  let issuer: SigningIssuer;
  try {
    issuer = await signingIssuer(req.storage, ref, 'crl-signing', access);
  } catch (e) {
    e = asCofferError(e);
    if (e instanceof CofferError) throw badRequest(`failed to resolve issuer issuer_ref: ${e.errors.join('; ')}`);
    throw e;
  }
  return { issuer, number, deltaBase, nextUpdate, der: format === 'der' };
}

async function signList(req: LogicalRequest, p: SignParams, entries: CrlEntry[], warnings: string[]): Promise<LogicalResponse> {
  const now = Date.now();
  const der = await buildCrl(
    {
      issuerDer: p.issuer.cert.subjectDer,
      issuerSkid: p.issuer.cert.skid ?? (await subjectKeyId(p.issuer.cert.spki)),
      signer: await crlSigner(req.storage, p.issuer.entry, p.issuer.access),
      thisUpdate: new Date(now),
      nextUpdate: new Date(now + p.nextUpdate * 1000),
      number: BigInt(p.number),
      ...(p.deltaBase > -1 ? { deltaBase: BigInt(p.deltaBase) } : {}),
    },
    entries,
  );
  return { data: { crl: p.der ? toBase64(der) : toPem('X509 CRL', der) }, ...(warnings.length ? { warnings } : {}) };
}

/** Combines CRLs the issuer signed (e.g. from several clusters) into one, re-signed. */
async function resignCrls(req: LogicalRequest, f: FieldData, access: KeyAccess): Promise<LogicalResponse> {
  const p = await signParams(req, f, access);
  const crls: ParsedCrl[] = f.get<string[]>('crls').map((text, i) => {
    const blocks = pemBlocks(text);
    if (blocks.length !== 1 || !text.trim().endsWith('-----')) throw badRequest(`failed decoding crl ${i}: invalid crl; should be one PEM block only`);
    try {
      return parseCrl(blocks[0].der);
    } catch (e) {
      throw badRequest(`failed decoding crl ${i}: ${e instanceof Error ? e.message : String(e)}`);
    }
  });
  for (const [i, crl] of crls.entries()) {
    if (!(await verifySignature(p.issuer.cert.spki, crl.signatureAlgorithm, crl.tbsDer, crl.signature))) {
      throw badRequest(`CRL index: ${i} was not signed by requested issuer`);
    }
  }
  // One entry per serial; when the CRLs disagree, the oldest revocation wins.
  const bySerial = new Map<string, CrlEntry>();
  const warnings: string[] = [];
  for (const crl of crls) {
    for (const e of crl.entries) {
      const seen = bySerial.get(e.serial);
      if (!seen) bySerial.set(e.serial, e);
      else if (seen.revocationTime.getTime() !== e.revocationTime.getTime()) {
        warnings.push(`Duplicate serial ${e.serial} with different revocation times detected, using oldest revocation time`);
        if (e.revocationTime < seen.revocationTime) bySerial.set(e.serial, e);
      }
    }
  }
  return await signList(req, p, [...bySerial.values()], warnings);
}

/** A serial_number of sign-revocation-list: hex, with any of ":", ".", "-", " " between digits. */
function listSerial(raw: unknown, i: number): string {
  if (raw === undefined) throw badRequest(`failed parsing serial_number from entry ${i}: missing 'serial_number' field`);
  if (typeof raw !== 'string') throw badRequest(`failed parsing serial_number from entry ${i}: 'serial_number' field value was not a string`);
  const bytes = fromHex(raw.replace(/[:.\- ]/g, ''));
  if (!bytes || bytes.length === 0) throw badRequest(`failed parsing serial_number from entry ${i}: 'serial_number' failed converting to bytes`);
  return serialFromBytes(bytes);
}

/** A revocation_time: RFC 3339, or seconds since the epoch (Vault's ParseAbsoluteTime). */
function listTime(raw: unknown, i: number): Date {
  if (raw === undefined) throw badRequest(`failed parsing revocation_time from entry ${i}: missing 'revocation_time' field`);
  const secs = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : null;
  const d = secs !== null ? new Date(secs * 1000) : typeof raw === 'string' && /^\d{4}-\d\d-\d\dT/.test(raw) ? new Date(raw) : null;
  if (!d || Number.isNaN(d.getTime())) throw badRequest(`failed parsing revocation_time from entry ${i}: failed parsing time ${String(raw)}`);
  return d;
}

const nonEmpty = (v: unknown): boolean => v !== undefined && v !== null && v !== '' && !(Array.isArray(v) && v.length === 0);

/** Signs a CRL holding exactly the given entries. */
async function signRevocationList(req: LogicalRequest, f: FieldData, access: KeyAccess): Promise<LogicalResponse> {
  const p = await signParams(req, f, access);
  const raw = f.get<unknown>('revoked_certs') ?? [];
  if (!Array.isArray(raw)) throw badRequest('revoked_certs must be a list of objects');
  const entries: CrlEntry[] = [];
  const seen = new Map<string, number>();
  for (const [i, item] of raw.entries()) {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) continue;
    const e = item as Record<string, unknown>;
    const serial = listSerial(e.serial_number, i);
    if (seen.has(serial)) throw badRequest(`duplicate serial number: ${String(e.serial_number)}, original entry ${seen.get(serial)} and ${i}`);
    seen.set(serial, i);
    const revocationTime = listTime(e.revocation_time, i);
    // Entry and CRL extensions cannot be encoded by our CRL builder yet.
    if (nonEmpty(e.extensions)) throw badRequest(`failed parsing extensions from entry ${i}: CRL entry extensions are not supported`);
    entries.push({ serial, revocationTime });
  }
  if (nonEmpty(f.get<unknown>('extensions'))) throw badRequest('CRL extensions are not supported');
  return await signList(req, p, entries, []);
}

const LEGACY_RAW = '(?:unified-)?crl(?<delta>/delta)?(?<pem>/pem)?';
const LEGACY_JSON = 'cert/(?<which>crl|delta-crl|unified-crl|unified-delta-crl)(?<raw>/raw(?<pem>/pem)?)?';
const ISSUER_CRL = `issuer/${nameRegex('issuer_ref')}/(?:unified-)?crl(?<delta>/delta)?(?<form>/der|/pem)?`;

const SIGN_FIELDS = {
  issuer_ref: { type: 'string', description: 'Issuer id, name or "default"', default: 'default' },
  crl_number: { type: 'int', description: 'The CRL Number to write' },
  delta_crl_base_number: { type: 'int', description: 'Base CRL number for a Delta CRL Indicator (-1: none)', default: -1 },
  next_update: { type: 'string', description: 'How long the CRL is valid', default: '72h' },
  format: { type: 'string', description: 'pem, or der (base64)', default: 'pem' },
} as const;

export function crlPaths(managedKeys?: ManagedKeyAccess): PathDef[] {
  const access = (req: LogicalRequest): KeyAccess => requestKeyAccess(managedKeys, req);
  const issuerRef = { type: 'string', description: 'Issuer id, name or "default"', required: true } as const;
  return [
    {
      pattern: LEGACY_RAW,
      summary: "The default issuer's CRL (DER, or PEM with /pem); unified-crl is the same in Coffer.",
      operations: {
        read: async (req) => {
          const g = groups(LEGACY_RAW, req.path);
          return await serveCrl(req, { issuerRef: null, kind: g.delta ? 'delta' : 'complete', form: g.pem ? 'pem' : 'der' }, access(req));
        },
      },
    },
    {
      pattern: LEGACY_JSON,
      summary: "The default issuer's CRL as JSON (PEM in `certificate`), or raw with /raw[/pem].",
      operations: {
        read: async (req) => {
          const g = groups(LEGACY_JSON, req.path);
          const form: Form = g.pem ? 'pem' : g.raw ? 'der' : 'json';
          return await serveCrl(req, { issuerRef: null, kind: g.which?.includes('delta') ? 'delta' : 'complete', form }, access(req));
        },
      },
    },
    {
      pattern: ISSUER_CRL,
      fields: { issuer_ref: issuerRef },
      summary: "An issuer's CRL: JSON (`crl`), or /der, /pem; /delta for its delta CRL.",
      operations: {
        read: async (req, f) => {
          const g = groups(ISSUER_CRL, req.path);
          const form: Form = g.form === '/der' ? 'der' : g.form === '/pem' ? 'pem' : 'json';
          return await serveCrl(req, { issuerRef: f.get<string>('issuer_ref'), kind: g.delta ? 'delta' : 'complete', form }, access(req));
        },
      },
    },
    {
      pattern: `issuer/${nameRegex('issuer_ref')}/resign-crls`,
      fields: { ...SIGN_FIELDS, crls: { type: 'string-list', description: 'PEM CRLs signed by the issuer, to combine' } },
      summary: 'Combine CRLs signed by the issuer into one, re-signed.',
      operations: { update: (req, f) => resignCrls(req, f, access(req)) },
    },
    {
      pattern: `issuer/${nameRegex('issuer_ref')}/sign-revocation-list`,
      fields: {
        ...SIGN_FIELDS,
        revoked_certs: { type: 'any', description: 'List of {serial_number, revocation_time, extensions}' },
        extensions: { type: 'any', description: 'CRL extensions (not supported)' },
      },
      summary: 'Sign a CRL with the given entries.',
      operations: { update: (req, f) => signRevocationList(req, f, access(req)) },
    },
    {
      pattern: 'crl/rotate',
      summary: 'Rebuild the complete CRLs now.',
      operations: {
        read: async (req) => {
          const warnings = rebuildWarnings(await rotateCrls(req.storage, Date.now(), access(req)));
          return { data: { success: true }, ...(warnings.length ? { warnings } : {}) };
        },
      },
    },
    {
      pattern: 'crl/rotate-delta',
      summary: 'Rebuild the delta CRLs now.',
      operations: {
        read: async (req) => {
          const enabled = (await loadCrlConfig(req.storage)).enableDelta;
          const warnings = rebuildWarnings(await rotateDeltaCrls(req.storage, Date.now(), access(req)));
          if (!enabled) warnings.push('requested rebuild of delta CRL when delta CRL is not enabled; this is a no-op');
          return { data: { success: true }, ...(warnings.length ? { warnings } : {}) };
        },
      },
    },
  ];
}
