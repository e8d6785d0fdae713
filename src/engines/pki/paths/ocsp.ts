// The OCSP responder (reference §1.11): GET ocsp/<base64 DER request> and POST ocsp with the DER
// request as body, unauthenticated. The answer is always an OCSP response (DER) with its HTTP
// status: 200 good/revoked/unknown, 400 malformedRequest, 401 unauthorized (OCSP disabled, no
// issuer allowed to sign), 500 internalError. Responses are signed by the issuer itself.

import { buildOcspResponse, certIdMatches, ocspErrorResponse, parseOcspRequest, responderKeyHash, type OcspCertId } from '../../../crypto/pki/ocsp';
import { fromBase64 } from '../../../crypto/encoding';
import type { LogicalRequest, LogicalResponse, PathDef } from '../../../framework/backend';
import type { FieldData } from '../../../framework/fields';
import { parsedIssuers, type IssuerCert } from '../certs';
import { crlDurations, loadCrlConfig } from '../crl-config';
import { loadRevoked } from '../revoked-store';
import { keySigner, requestKeyAccess, type KeyAccess } from '../signers';
import { issuersConfig, loadAllIssuers, loadCert, loadKey } from '../store';
import type { ManagedKeyAccess } from '../../../managed-keys/access';

const CONTENT_TYPE = 'application/ocsp-response';
/** Requests this big or bigger are refused (a normal request is under 100 bytes). */
const MAX_REQUEST = 2048;

type OcspFailure = 'malformedRequest' | 'unauthorized' | 'internalError';
const FAILURE_STATUS: Record<OcspFailure, number> = { malformedRequest: 400, unauthorized: 401, internalError: 500 };

const failure = (kind: OcspFailure): LogicalResponse => ({
  raw: { status: FAILURE_STATUS[kind], body: ocspErrorResponse(kind), contentType: CONTENT_TYPE },
});

/** The DER request of a GET (base64 in the path) or POST (raw body); null when there is none. */
function requestDer(req: LogicalRequest, f: FieldData): Uint8Array | null {
  if (req.operation === 'read') {
    let b64 = f.get<string>('req');
    if (b64 === '' || b64.length >= MAX_REQUEST) return null;
    // Clients may percent-encode the base64 ('+', '/', '=') in the URL.
    if (b64.includes('%')) {
      try {
        b64 = decodeURIComponent(b64);
      } catch {
        return null;
      }
    }
    return fromBase64(b64);
  }
  const body = req.rawBody;
  if (!body || body.length === 0 || body.length >= MAX_REQUEST) return null;
  return body;
}

interface Status {
  status: 'good' | 'revoked' | 'unknown';
  revocationTime?: Date;
  /** The issuer the revocation entry names ('' when none). */
  issuerId: string;
}

async function certStatus(req: LogicalRequest, id: OcspCertId): Promise<Status> {
  const revoked = await loadRevoked(req.storage, id.serial);
  if (revoked) {
    const time = revoked.revocationTimeNanos ? new Date(revoked.revocationTimeNanos) : new Date(revoked.revocationTime * 1000);
    return { status: 'revoked', revocationTime: time, issuerId: revoked.issuerId };
  }
  // A serial this mount never stored is unknown, even under a known issuer.
  return { status: (await loadCert(req.storage, id.serial)) ? 'good' : 'unknown', issuerId: '' };
}

/** Signs an answer with the issuer's key, its revocation algorithm downgraded from PSS to PKCS#1 v1.5. */
async function answer(req: LogicalRequest, access: KeyAccess, issuer: IssuerCert, id: OcspCertId, s: Status): Promise<LogicalResponse> {
  const keyEntry = await loadKey(req.storage, issuer.entry.keyId);
  if (!keyEntry) return failure('unauthorized');
  // Vault's OCSP library cannot sign with Ed25519 keys.
  if (keyEntry.type === 'ed25519') return failure('internalError');
  const alg = issuer.entry.revocationSignatureAlgorithm.replace(/PSS$/i, '');
  const signer = await keySigner(access, keyEntry, alg ? { goName: alg } : { signatureBits: 0, usePss: false });
  const now = Date.now();
  const expiry = crlDurations(await loadCrlConfig(req.storage)).ocspExpiry;
  const body = await buildOcspResponse({
    id,
    status: s.status,
    ...(s.status === 'revoked' ? { revocationTime: s.revocationTime } : {}),
    responderKeyHash: await responderKeyHash(issuer.cert.spki),
    signer,
    thisUpdate: new Date(now),
    nextUpdate: expiry > 0 ? new Date(now + expiry * 1000) : null,
  });
  return { raw: { status: 200, body, contentType: CONTENT_TYPE } };
}

async function respond(req: LogicalRequest, f: FieldData, access: KeyAccess): Promise<LogicalResponse> {
  if ((await loadCrlConfig(req.storage)).ocspDisable) return failure('unauthorized');
  const der = requestDer(req, f);
  if (!der) return failure('malformedRequest');
  let id: OcspCertId;
  try {
    id = parseOcspRequest(der);
  } catch {
    return failure('malformedRequest');
  }
  try {
    const s = await certStatus(req, id);
    const all = (await loadAllIssuers(req.storage)).filter((e) => e.keyId !== '');
    // A revocation entry names its issuer: only that one may answer for it.
    const candidates = parsedIssuers(s.issuerId ? all.filter((e) => e.id === s.issuerId) : all);
    let matchedWithoutUsage = false;
    for (const c of candidates) {
      if (!(await certIdMatches(id, c.cert.subjectDer, c.cert.spki))) continue;
      if (!c.entry.usage.includes('ocsp-signing')) {
        // A rotated issuer with the same name and key may still be allowed: keep looking.
        matchedWithoutUsage = true;
        continue;
      }
      return await answer(req, access, c, id, s);
    }
    if (matchedWithoutUsage) return failure('unauthorized');
    // Not one of our issuers: "unknown", signed by the default issuer if it may sign.
    const defaultId = (await issuersConfig(req.storage)).default;
    const fallback = all.find((e) => e.id === defaultId);
    if (!fallback || !fallback.usage.includes('ocsp-signing')) return failure('unauthorized');
    return await answer(req, access, parsedIssuers([fallback])[0], id, { status: 'unknown', issuerId: '' });
  } catch (e) {
    console.error('OCSP internal error', e);
    return failure('internalError');
  }
}

export function ocspPaths(managedKeys?: ManagedKeyAccess): PathDef[] {
  const respondOp = (req: LogicalRequest, f: FieldData) => respond(req, f, requestKeyAccess(managedKeys, req));
  return [
    {
      pattern: 'ocsp/(?<req>.+)',
      fields: { req: { type: 'string', description: 'Base64 DER OCSP request' } },
      summary: 'OCSP responder (GET form).',
      operations: { read: respondOp },
    },
    {
      pattern: 'ocsp',
      summary: 'OCSP responder (POST form, application/ocsp-request body).',
      operations: { update: respondOp },
    },
    {
      // Unified OCSP needs unified_crl, which the community edition cannot enable.
      pattern: 'unified-ocsp(?:/(?<req>.+))?',
      fields: { req: { type: 'string', description: 'Base64 DER OCSP request' } },
      summary: 'Unified OCSP responder (enterprise: always unauthorized here).',
      operations: { read: async () => failure('unauthorized'), update: async () => failure('unauthorized') },
    },
  ];
}
