// A certificate template for tests that build certificates directly (buildCertificate): a leaf
// named "test", valid from 30 s ago for a day, with no extensions beyond what `over` asks for.
import { emptySans, emptySubject, type CertTemplate } from '../../src/crypto/pki/certificate';
import { randomSerial } from '../../src/crypto/pki/serial';

export function certTemplate(spki: Uint8Array, over: Partial<CertTemplate> = {}): CertTemplate {
  const now = Date.now();
  return {
    serial: randomSerial(),
    subject: { ...emptySubject(), commonName: 'test' },
    sans: emptySans(),
    notBefore: new Date(now - 30_000),
    notAfter: new Date(now + 86_400_000),
    spki,
    isCA: false,
    maxPathLength: -1,
    basicConstraintsForNonCA: false,
    keyUsage: [],
    extKeyUsage: [],
    extKeyUsageOids: [],
    permittedDnsDomains: [],
    policyIdentifiers: [],
    issuingCertificates: [],
    ocspServers: [],
    crlDistributionPoints: [],
    deltaCrlDistributionPoints: [],
    ...over,
  };
}
