// Signing an intermediate CA's CSR (reference §1.3; spec "Sign-intermediate parameters"):
// root/sign-intermediate (the default issuer) and issuer/:issuer_ref/sign-intermediate. The CSR
// contributes only its key unless use_csr_values; NotAfter is cut to the issuer's own unless
// enforce_leaf_not_after_behavior defers to the issuer's leaf_not_after_behavior.

import { buildCertificate, parseCertificate, type CertTemplate, type ParsedCert } from '../../../crypto/pki/certificate';
import { parseCsr } from '../../../crypto/pki/csr';
import { publicKeyInfo, subjectKeyId } from '../../../crypto/pki/keys';
import { randomSerial } from '../../../crypto/pki/serial';
import { fromHex, toBase64 } from '../../../crypto/encoding';
import { nameRegex, type LogicalRequest, type LogicalResponse, type PathDef } from '../../../framework/backend';
import { asCofferError, badRequest, CofferError } from '../../../framework/errors';
import type { FieldData } from '../../../framework/fields';
import { applyNotAfterBehavior, checkFormat, issuerSigner, signingIssuer, storeIssued, type SigningIssuer } from '../authority';
import {
  CA_ISSUE_FIELDS,
  CA_NAME_FIELDS,
  caKeyUsage,
  caKeyUsageProblems,
  caNames,
  certAiaEmpty,
  checkMaxPathLength,
  EMPTY_SUBJECT_WARNING,
  requestedValidity,
} from './generate';
import { NO_AIA_WARNING } from './config';
import { requestKeyAccess, type KeyAccess } from '../signers';
import type { IssuerUsage } from '../store';
import type { ManagedKeyAccess } from '../../../managed-keys/access';

/** The signing issuer, with Vault's wrapping of lookup failures. */
export async function caForSigning(req: LogicalRequest, ref: string, access: KeyAccess, usage: IssuerUsage = 'issuing-certificates'): Promise<SigningIssuer> {
  try {
    return await signingIssuer(req.storage, ref.toLowerCase() === 'default' ? 'default' : ref, usage, access);
  } catch (e) {
    e = asCofferError(e);
    if (e instanceof CofferError && e.status === 400) throw badRequest(`could not fetch the CA certificate (was one set?): ${e.errors[0]}`);
    throw e;
  }
}

/** The path length of the new CA: as asked (within the signer's limit), else one less than the signer's. */
function pathLength(f: FieldData, signer: ParsedCert): number {
  const caLimit = signer.pathLen;
  let n: number;
  if (f.has('max_path_length')) {
    n = f.get<number>('max_path_length');
    checkMaxPathLength(n);
    if (caLimit >= 0 && (n < 0 || n >= caLimit)) {
      throw badRequest(
        `requested max_path_length ${n} is not allowed: the signing CA has a pathLenConstraint of ${caLimit}, so the intermediate's pathLenConstraint must be a non-negative value less than ${caLimit}`,
      );
    }
  } else {
    n = caLimit < 0 ? -1 : Math.max(caLimit - 1, 0);
  }
  if (caLimit === 0) throw badRequest('signing certificate has a max path length of zero, and cannot issue further CA certificates');
  return n;
}

/** skid: hex, with the ':' '-' ' ' separators tools print removed. */
function requestedSkid(f: FieldData): Uint8Array | undefined {
  if (!f.has('skid')) return undefined;
  const hex = f.get<string>('skid').replace(/[:\- ]/g, '');
  const bytes = fromHex(hex);
  if (!bytes) throw badRequest(`cannot parse requested SKID value as hex: encoding/hex: invalid hex string ${JSON.stringify(f.get<string>('skid'))}`);
  return bytes;
}

async function signIntermediate(req: LogicalRequest, f: FieldData, ref: string, access: KeyAccess): Promise<LogicalResponse> {
  const format = checkFormat(f.get<string>('format'));
  const ca = await caForSigning(req, ref, access);
  const maxPathLength = pathLength(f, ca.cert);
  const csr = await parseCsr(f.get<string>('csr'));
  const csrKey = publicKeyInfo(csr.spki);
  if (csrKey.type === 'rsa' && csrKey.bits < 2048) throw badRequest('RSA keys < 2048 bits are unsafe and not supported');
  const useCsrValues = f.get<boolean>('use_csr_values');
  const names = caNames(f, csr);
  const later: string[] = [];
  let { notBefore, notAfter } = requestedValidity(req, f, later);

  // Truncated to the issuer by default so the chain stays valid; enforce_leaf_not_after_behavior
  // makes the issuer's own rule (err / truncate / permit) apply instead.
  let truncated = false;
  if (f.get<boolean>('enforce_leaf_not_after_behavior')) notAfter = applyNotAfterBehavior(ca, notAfter);
  else if (notAfter.getTime() > ca.cert.notAfter.getTime()) {
    notAfter = ca.cert.notAfter;
    truncated = true;
  }
  if (notBefore.getTime() < ca.cert.notBefore.getTime()) throw badRequest("notBefore before signer's notBefore");
  if (notAfter.getTime() < notBefore.getTime()) throw badRequest('notAfter before notBefore');

  const keyUsage = caKeyUsage(f.get<string[]>('key_usage'));
  if (useCsrValues) for (const u of csr.keyUsage ?? []) if (!keyUsage.includes(u)) keyUsage.push(u);
  const template: CertTemplate = {
    serial: randomSerial(),
    subject: useCsrValues ? { der: csr.subjectDer } : names.subject,
    sans: useCsrValues ? csr.sans : names.sans,
    notBefore,
    notAfter,
    spki: csr.spki,
    isCA: true,
    maxPathLength,
    basicConstraintsForNonCA: false,
    keyUsage,
    extKeyUsage: [],
    extKeyUsageOids: [],
    permittedDnsDomains: f.get<string[]>('permitted_dns_domains'),
    policyIdentifiers: [],
    issuingCertificates: ca.aia.issuingCertificates,
    ocspServers: ca.aia.ocspServers,
    crlDistributionPoints: ca.aia.crlDistributionPoints,
    deltaCrlDistributionPoints: ca.aia.deltaCrlDistributionPoints,
    skid: requestedSkid(f),
    // use_csr_values: the CSR's other extensions come along (never its basic constraints).
    extraExtensions: useCsrValues ? csr.extensions.filter((e) => e.oid !== '2.5.29.19').map((e) => e.der) : undefined,
  };
  const signer = await issuerSigner(ca, { signatureBits: f.get<number>('signature_bits'), usePss: f.get<boolean>('use_pss') });
  const skid = ca.cert.skid ?? (await subjectKeyId(ca.cert.spki));
  const cert = parseCertificate(await buildCertificate(template, { subjectDer: ca.cert.subjectDer, skid, signer }));
  await storeIssued(req.storage, cert, ca.entry.id);

  const warnings: string[] = [];
  if (cert.notAfter.getTime() > ca.cert.notAfter.getTime()) {
    warnings.push(
      "The expiration time for the signed certificate is after the CA's expiration time. If the new certificate is not treated as a root, validation paths with the certificate past the issuing CA's expiration time will fail.",
    );
  }
  if (cert.subjectDer.length <= 2) warnings.push(EMPTY_SUBJECT_WARNING);
  if (certAiaEmpty(ca.aia)) warnings.push(NO_AIA_WARNING);
  if (ca.aia.deltaCrlDistributionPoints.length > 0 && ca.aia.crlDistributionPoints.length === 0) {
    warnings.push('This mount has configured delta CRL distribution points, but not CRL distribution points.');
  }
  if (cert.pathLen === 0) warnings.push('Max path length of the signed certificate is zero. This CA certificate cannot be used to issue intermediate CA certificates.');
  warnings.push(...later);
  if (truncated) warnings.push("the signed intermediary CA certificate's notAfter was truncated to the issuer's notAfter");
  if (f.has('key_usage')) {
    const problems = caKeyUsageProblems(f.get<string[]>('key_usage'));
    if (problems) warnings.push(`Invalid key usage: ${problems}`);
  }

  const chain = [cert.pem, ...ca.chainPems];
  const der = (pem: string) => toBase64(parseCertificate(pem).der);
  const data: Record<string, unknown> = {
    expiration: Math.floor(cert.notAfter.getTime() / 1000),
    serial_number: cert.serial,
    certificate: format === 'der' ? toBase64(cert.der) : format === 'pem_bundle' ? [cert.pem, ...ca.chainPems].join('\n') : cert.pem,
    issuing_ca: format === 'der' ? der(ca.entry.certificate) : ca.entry.certificate.trim(),
    ca_chain: format === 'der' ? chain.map(der) : chain,
  };
  return { data, ...(warnings.length ? { warnings } : {}) };
}

export function signIntermediatePaths(managedKeys?: ManagedKeyAccess): PathDef[] {
  const fields = {
    ...CA_NAME_FIELDS,
    ...CA_ISSUE_FIELDS,
    csr: { type: 'string', description: 'PEM CSR of the intermediate' },
    use_csr_values: { type: 'bool', description: "Keep the CSR's subject, SANs, key usages and extensions" },
    skid: { type: 'string', description: 'Subject key identifier to use, hex (cross-signing)' },
    use_pss: { type: 'bool', description: 'RSA-PSS signature' },
    enforce_leaf_not_after_behavior: { type: 'bool', description: "Apply the issuer's leaf_not_after_behavior instead of truncating" },
  } as const;
  return [
    {
      pattern: 'root/sign-intermediate',
      fields,
      summary: 'Sign an intermediate CA certificate with the default issuer.',
      operations: { update: (req, f) => signIntermediate(req, f, 'default', requestKeyAccess(managedKeys, req)) },
    },
    {
      pattern: `issuer/${nameRegex('issuer_ref')}/sign-intermediate`,
      fields: { ...fields, issuer_ref: { type: 'string', description: 'Issuer id, name, or "default"' } },
      summary: 'Sign an intermediate CA certificate with this issuer.',
      operations: { update: (req, f) => signIntermediate(req, f, f.get<string>('issuer_ref').trim(), requestKeyAccess(managedKeys, req)) },
    },
  ];
}
