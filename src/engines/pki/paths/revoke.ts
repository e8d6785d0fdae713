// Revocation (reference §1.9): revoke and revoke-with-key (by serial or by PEM), issuer revocation,
// LIST certs/revoked, and the `pki` secret type whose lease revocation revokes the certificate.
// A revocation writes its entry (plus a delta-log entry with delta CRLs on) and flags the CRLs
// stale; it never rebuilds a CRL itself, so it costs the same however many certificates are
// already revoked. Issuer revocation is rare and rebuilds every CRL at once, as Vault does.

import { parseCertificate, type ParsedCert } from '../../../crypto/pki/certificate';
import { parsePrivateKeyPem, publicKeyInfo, sameKey } from '../../../crypto/pki/keys';
import { normalizeSerial } from '../../../crypto/pki/serial';
import { pemBlocks } from '../../../crypto/pem';
import { bytesEqual, fromBase64, toBase64 } from '../../../crypto/encoding';
import { nameRegex, type LogicalRequest, type LogicalResponse, type PathDef, type SecretType } from '../../../framework/backend';
import { formatRFC3339Nano } from '../../../framework/duration';
import { asCofferError, badRequest, CofferError, notFound } from '../../../framework/errors';
import type { FieldData } from '../../../framework/fields';
import type { Storage } from '../../../framework/storage';
import { parsedIssuers, parseStoredCert, signerOf, signersOf } from '../certs';
import { loadCrlConfig } from '../crl-config';
import { rebuildCrlsOrFail, rebuildWarnings } from '../crl-store';
import { requestKeyAccess, type KeyAccess } from '../signers';
import type { ManagedKeyAccess } from '../../../managed-keys/access';
import { issuerResponse } from './issuers';
import { addToDeltaLog, loadRevoked, markCrlsStale, revokedSerials, saveRevoked, type RevokedEntry } from '../revoked-store';
import { issuersConfig, loadAllIssuers, loadCert, resolveIssuerRef, saveCert, saveIssuer, type CertEntry } from '../store';

/** Certificates expiring within this margin are not revoked (leases have one-second granularity). */
const EXPIRY_MARGIN_MS = 2000;

const revokedData = (e: RevokedEntry): Record<string, unknown> => ({
  revocation_time: e.revocationTime,
  revocation_time_rfc3339: e.revocationTimeNanos,
  state: 'revoked',
});

interface Target {
  cert: ParsedCert;
  /** The issuer recorded with the stored certificate ('' when unknown). */
  issuerId: string;
}

/** How long a stale CRL may wait for the mount's periodic run (reads never see it stale). */
export const STALE_CRL_REBUILD_DELAY_MS = 5_000;

/**
 * Revokes a certificate this mount knows (Vault's revokeCert). Idempotent: a revoked serial answers
 * with its stored revocation. `fromLease` is a lease's revocation (no CA certificates, no errors
 * for vanished ones).
 */
export async function revokeCertificate(storage: Storage, t: Target, now: number, wakeAt?: (at: number) => void): Promise<LogicalResponse> {
  const issuers = parsedIssuers(await loadAllIssuers(storage));
  // Issuers are revoked through issuer/:ref/revoke, never by serial.
  const self = issuers.find((i) => i.cert.serial === t.cert.serial);
  if (self) throw badRequest(`adding issuer (id: ${self.entry.id}) to its own CRL is not allowed`);

  const existing = await loadRevoked(storage, t.cert.serial);
  if (existing) return { data: revokedData(existing) };
  if (t.cert.notAfter.getTime() < now + EXPIRY_MARGIN_MS) {
    return { warnings: [`certificate with serial ${t.cert.serial} already expired; refusing to add to CRL`] };
  }

  let issuerId = issuers.some((i) => i.entry.id === t.issuerId) ? t.issuerId : '';
  if (!issuerId) issuerId = (await signerOf(t.cert, issuers))?.entry.id ?? '';
  const entry: RevokedEntry = {
    serial: t.cert.serial,
    certificate: toBase64(t.cert.der),
    revocationTime: Math.floor(now / 1000),
    revocationTimeNanos: formatRFC3339Nano(now),
    issuerId,
    expiresAt: Math.floor(t.cert.notAfter.getTime() / 1000),
  };
  await saveRevoked(storage, entry);

  // The CRLs catch up later: at once (next read or periodic run) without auto-rebuild; with it, on
  // its schedule, and through the delta CRLs when those are on.
  const config = await loadCrlConfig(storage);
  if (!config.autoRebuild) {
    await markCrlsStale(storage, { complete: true });
  } else if (config.enableDelta) {
    await addToDeltaLog(storage, entry.serial);
    await markCrlsStale(storage, { delta: true });
  }
  // A burst of revocations shares one rebuild: a CRL read rebuilds a stale CRL at once anyway,
  // and OCSP answers from the revoked entries themselves.
  wakeAt?.(now + STALE_CRL_REBUILD_DELAY_MS);
  return { data: revokedData(entry) };
}

/** The certificate a serial names, from the certificate store; null when it is not stored. */
async function storedTarget(storage: Storage, serial: string): Promise<Target | null> {
  const colon = normalizeSerial(serial);
  if (!colon) return null;
  const stored = await loadCert(storage, colon);
  if (!stored) return null;
  return { cert: parseStoredCert(stored.certificate), issuerId: stored.issuerId };
}

/** A PEM certificate given to revoke: stored already, or verified against the mount's issuers. */
async function presentedTarget(storage: Storage, pem: string): Promise<{ target: Target; store: CertEntry | null }> {
  if (pem.length < 75) {
    throw badRequest('provided certificate data was too short; perhaps a path was passed to the API rather than the contents of a PEM file');
  }
  const block = pemBlocks(pem)[0];
  if (!block) throw badRequest('certificate contains no PEM data');
  let cert: ParsedCert;
  try {
    cert = parseCertificate(block.der);
  } catch (e) {
    e = asCofferError(e);
    const why = e instanceof CofferError ? e.errors.join('; ') : String(e);
    throw badRequest(`certificate could not be parsed: ${why}`);
  }
  const stored = await loadCert(storage, cert.serial);
  if (stored) {
    if (!bytesEqual(fromBase64(stored.certificate) ?? new Uint8Array(0), cert.der)) {
      throw badRequest("certificate with same serial but unequal value already present in this cluster's storage; refusing to revoke");
    }
    return { target: { cert, issuerId: stored.issuerId }, store: null };
  }
  const signer = await signerOf(cert, parsedIssuers(await loadAllIssuers(storage)));
  if (!signer) {
    throw badRequest(
      'unable to verify signature on presented cert from any present issuer in this mount; certificates from previous CAs will need to have their issuing CA and key re-imported if revocation is necessary',
    );
  }
  const entry: CertEntry = { certificate: toBase64(cert.der), issuerId: signer.entry.id, expiresAt: Math.floor(cert.notAfter.getTime() / 1000) };
  return { target: { cert, issuerId: signer.entry.id }, store: entry };
}

/** revoke-with-key: the private key must be the certificate's. */
async function checkKey(cert: ParsedCert, keyPem: string): Promise<void> {
  const key = await parsePrivateKeyPem(keyPem);
  let certType: string;
  try {
    certType = publicKeyInfo(cert.spki).type;
  } catch {
    throw badRequest('certificate has an unknown public key algorithm; unable to validate provided private key; ask an admin to revoke this certificate instead');
  }
  if (certType !== key.type) throw badRequest("provided private key type does not match certificate's public key type");
  if (!sameKey(key, cert.spki)) throw badRequest("provided private key does not match certificate's public key");
}

async function revoke(req: LogicalRequest, f: FieldData, withKey: boolean): Promise<LogicalResponse> {
  const haveSerial = f.has('serial_number');
  const haveCert = f.has('certificate');
  if (!haveSerial && !haveCert) throw badRequest('The serial number or certificate to revoke must be provided.');
  if (haveSerial && haveCert) throw badRequest('Must provide either the certificate or the serial to revoke; not both.');
  let keyPem = '';
  if (withKey) {
    if (!f.has('private_key')) throw badRequest('Must have private key to revoke via the /revoke-with-key path.');
    keyPem = f.get<string>('private_key');
    if (keyPem.length < 64) {
      throw badRequest('Provided data for private_key was too short; perhaps a path was passed to the API rather than the contents of a PEM file?');
    }
  }

  let target: Target | null;
  let store: CertEntry | null = null;
  if (haveCert) {
    ({ target, store } = await presentedTarget(req.storage, f.get<string>('certificate')));
  } else {
    const serial = f.get<string>('serial_number');
    if (serial === '') throw badRequest('The serial number must be provided');
    target = await storedTarget(req.storage, serial);
    if (!target) throw badRequest(`certificate with serial ${serial} not found.`);
  }
  if (withKey) await checkKey(target.cert, keyPem);
  // A presented certificate from one of our issuers is kept, so it can be looked up like any other.
  if (store) await saveCert(req.storage, target.cert.serial, store);
  return await revokeCertificate(req.storage, target, Date.now(), req.wakeAt);
}

/** issuer/:ref/revoke: revokes an issuer (irreversible), puts it on its parents' CRLs and rebuilds them. */
async function revokeIssuer(req: LogicalRequest, f: FieldData, access: KeyAccess): Promise<LogicalResponse> {
  const issuer = await resolveIssuerRef(req.storage, f.get<string>('issuer_ref'));
  if (issuer.revoked) return await issuerResponse(req.storage, issuer);
  const now = Date.now();
  const updated = {
    ...issuer,
    revoked: true,
    // A revoked issuer can no longer issue; its CRL keeps being signed.
    usage: issuer.usage.filter((u) => u !== 'issuing-certificates'),
    revocationTime: Math.floor(now / 1000),
    revocationTimeNanos: formatRFC3339Nano(now),
    lastModified: now,
  };
  await saveIssuer(req.storage, updated);

  const all = parsedIssuers(await loadAllIssuers(req.storage));
  const ours = all.find((i) => i.entry.id === issuer.id)!;
  // If a parent in this mount issued it, its stored copy is marked revoked like any certificate.
  const stored = await loadCert(req.storage, ours.cert.serial);
  if (stored && bytesEqual(fromBase64(stored.certificate) ?? new Uint8Array(0), ours.cert.der)) {
    await saveRevoked(req.storage, {
      serial: ours.cert.serial,
      certificate: stored.certificate,
      revocationTime: updated.revocationTime,
      revocationTimeNanos: updated.revocationTimeNanos,
      issuerId: '',
      expiresAt: Math.floor(ours.cert.notAfter.getTime() / 1000),
    });
  }

  const warnings = rebuildWarnings(await rebuildCrlsOrFail(req.storage, now, true, access));
  const parents = await signersOf(ours.cert, all);
  if (parents.some((p) => p.entry.id === issuer.id)) {
    warnings.push(
      "This issuer is a self-signed (potentially root) certificate. This means it may not be considered revoked if there is not an external, cross-signed variant of this certificate. This issuer's serial number will not appear on its own CRL.",
    );
  }
  if (!parents.some((p) => p.entry.id !== issuer.id)) {
    warnings.push(
      'This issuer lacks another parent issuer within the mount. This means it will not appear on any other CRLs and may not be considered revoked by clients. Consider adding this issuer to its issuer\'s CRL as well if it is not self-signed.',
    );
  }
  if ((await issuersConfig(req.storage)).default === issuer.id) {
    warnings.push(
      'This issuer is currently configured as the default issuer for this mount; operations such as certificate issuance may not work until a new default issuer is selected.',
    );
  }
  return await issuerResponse(req.storage, updated, warnings);
}

/**
 * The `pki` secret type: certificates issued with generate_lease. Revoking the lease revokes the
 * certificate; one that is gone, expired or a CA is simply let go (Vault's fromLease).
 */
export const pkiSecretType: SecretType = {
  async revoke(lease, storage) {
    const serial = String(lease.internal.serial_number ?? '');
    const target = serial ? await storedTarget(storage, serial) : null;
    if (!target || target.cert.isCA) return;
    const issuers = parsedIssuers(await loadAllIssuers(storage));
    if (issuers.some((i) => i.cert.serial === target.cert.serial)) return;
    await revokeCertificate(storage, target, Date.now());
  },
};

export function revokePaths(managedKeys?: ManagedKeyAccess): PathDef[] {
  const serial = { type: 'string', description: 'Serial number, colon- or hyphen-separated hex' } as const;
  const certificate = { type: 'string', description: 'PEM certificate to revoke; must be signed by an issuer of this mount' } as const;
  return [
    {
      pattern: 'revoke',
      fields: { serial_number: serial, certificate },
      summary: 'Revoke a certificate by serial number or PEM.',
      operations: { update: (req, f) => revoke(req, f, false) },
    },
    {
      pattern: 'revoke-with-key',
      fields: {
        serial_number: serial,
        certificate,
        private_key: { type: 'string', description: "The certificate's private key (PEM), as proof of possession" },
      },
      summary: 'Revoke a certificate, proving possession of its private key.',
      operations: { update: (req, f) => revoke(req, f, true) },
    },
    {
      pattern: `issuer/${nameRegex('issuer_ref')}/revoke`,
      fields: { issuer_ref: { type: 'string', description: 'Issuer id, name or "default"', required: true } },
      summary: 'Revoke an issuer (cannot be undone).',
      operations: { update: (req, f) => revokeIssuer(req, f, requestKeyAccess(managedKeys, req)) },
    },
    {
      pattern: 'certs/revoked/?',
      summary: 'List the serial numbers of revoked certificates.',
      operations: {
        list: async (req) => {
          const keys = await revokedSerials(req.storage);
          if (keys.length === 0) throw notFound();
          return { data: { keys } };
        },
      },
    },
  ];
}
