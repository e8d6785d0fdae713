// Re-signing a self-issued CA certificate (spec: "signs a self-issued certificate as is"):
// root/sign-self-issued (sudo; the default issuer) and issuer/:issuer_ref/sign-self-issued. Only the
// issuer DN, the authority key id and the distribution points change; everything else of the
// submitted certificate (serial, subject, validity, key, extensions) is kept. Nothing is stored.

import { buildCertificate, certPem, parseCertificates, type CertTemplate, type ParsedCert } from '../../../crypto/pki/certificate';
import { publicKeyInfo, subjectKeyId, type PkiKeyType, type Signer } from '../../../crypto/pki/keys';
import { nameRegex, type LogicalRequest, type LogicalResponse, type PathDef } from '../../../framework/backend';
import { asCofferError, badRequest, CofferError } from '../../../framework/errors';
import type { FieldData } from '../../../framework/fields';
import { issuerSigner, type SigningIssuer } from '../authority';
import { requestKeyAccess, type KeyAccess } from '../signers';
import { caForSigning } from './sign-intermediate';
import type { ManagedKeyAccess } from '../../../managed-keys/access';

/** Extensions the signing issuer replaces (AKID, AIA, CRL distribution points, freshest CRL). */
const REPLACED = new Set(['2.5.29.35', '1.3.6.1.5.5.7.1.1', '2.5.29.31', '2.5.29.46']);
const GO_KEY_ALGORITHM: Record<PkiKeyType, string> = { rsa: 'RSA', ec: 'ECDSA', ed25519: 'Ed25519' };

function parseOne(pem: string): ParsedCert {
  let certs: ParsedCert[];
  try {
    certs = parseCertificates(pem);
  } catch (e) {
    e = asCofferError(e);
    if (e instanceof CofferError && e.status === 400) throw badRequest(`error parsing certificate: ${e.errors[0]}`);
    throw e;
  }
  if (certs.length !== 1) throw badRequest(`${certs.length} certificates found in PEM file, expected 1`);
  return certs[0];
}

/**
 * The certificate's own signature algorithm when the issuer's key can make it; a key of another
 * type signs with its default, unless require_matching_certificate_algorithms forbids that.
 */
async function signerForCopy(ca: SigningIssuer, cert: ParsedCert, requireMatching: boolean): Promise<Signer> {
  const certType = publicKeyInfo(cert.spki).type;
  const caType = ca.keyEntry.type;
  const byDefault = { signatureBits: 0, usePss: false };
  if (certType !== caType) {
    if (requireMatching) {
      throw badRequest(
        `signing certificate's public key algorithm (${GO_KEY_ALGORITHM[caType]}) does not match submitted certificate's (${GO_KEY_ALGORITHM[certType]}), and require_matching_certificate_algorithms is true`,
      );
    }
    return await issuerSigner(ca, byDefault);
  }
  if (cert.signatureGoName) {
    try {
      return await issuerSigner(ca, { goName: cert.signatureGoName });
    } catch (e) {
      e = asCofferError(e);
      if (!(e instanceof CofferError)) throw e;
    }
  }
  return await issuerSigner(ca, byDefault);
}

async function signSelfIssued(req: LogicalRequest, f: FieldData, ref: string, access: KeyAccess): Promise<LogicalResponse> {
  const cert = parseOne(f.get<string>('certificate'));
  if (!cert.isCA) throw badRequest('given certificate is not a CA certificate');
  if (!cert.selfIssued) throw badRequest('given certificate is not self-issued');
  const ca = await caForSigning(req, ref, access);
  const signer = await signerForCopy(ca, cert, f.get<boolean>('require_matching_certificate_algorithms'));

  const template: CertTemplate = {
    serial: cert.serial,
    subject: { der: cert.subjectDer },
    sans: cert.sans,
    notBefore: cert.notBefore,
    notAfter: cert.notAfter,
    spki: cert.spki,
    isCA: true,
    maxPathLength: cert.pathLen,
    basicConstraintsForNonCA: false,
    keyUsage: cert.keyUsage,
    extKeyUsage: cert.extKeyUsage,
    extKeyUsageOids: cert.extKeyUsageOids,
    // Name constraints and policies travel verbatim with the other extensions below.
    permittedDnsDomains: [],
    policyIdentifiers: [],
    issuingCertificates: ca.aia.issuingCertificates,
    ocspServers: ca.aia.ocspServers,
    crlDistributionPoints: ca.aia.crlDistributionPoints,
    deltaCrlDistributionPoints: ca.aia.deltaCrlDistributionPoints,
    skid: cert.skid ?? undefined,
    extraExtensions: cert.extensions.filter((e) => !REPLACED.has(e.oid)).map((e) => e.der),
  };
  const skid = ca.cert.skid ?? (await subjectKeyId(ca.cert.spki));
  const der = await buildCertificate(template, { subjectDer: ca.cert.subjectDer, skid, signer });
  return { data: { certificate: certPem(der), issuing_ca: ca.entry.certificate.trim() } };
}

export function selfIssuedPaths(managedKeys?: ManagedKeyAccess): PathDef[] {
  const fields = {
    certificate: { type: 'string', description: 'PEM of the self-issued CA certificate to sign' },
    require_matching_certificate_algorithms: { type: 'bool', description: "Refuse when the issuer's key type differs from the certificate's" },
  } as const;
  return [
    {
      pattern: 'root/sign-self-issued',
      fields,
      summary: 'Sign a self-issued CA certificate with the default issuer (sudo).',
      operations: { update: (req, f) => signSelfIssued(req, f, 'default', requestKeyAccess(managedKeys, req)) },
    },
    {
      pattern: `issuer/${nameRegex('issuer_ref')}/sign-self-issued`,
      fields: { ...fields, issuer_ref: { type: 'string', description: 'Issuer id, name, or "default"' } },
      summary: 'Sign a self-issued CA certificate with this issuer.',
      operations: { update: (req, f) => signSelfIssued(req, f, f.get<string>('issuer_ref').trim(), requestKeyAccess(managedKeys, req)) },
    },
  ];
}
