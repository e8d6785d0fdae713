// keys/:name/csr and keys/:name/set-certificate: a CSR signed by an asymmetric key version (from
// an optional template), and the certificate chain a CA issued for it, kept with the version
// (shown by key read and export/certificate-chain).

import * as x509 from '../../../crypto/pki/x509';
import type { AsymmetricKey } from '../../../crypto/transit/asymmetric';
import type { LogicalRequest, PathDef } from '../../../framework/backend';
import { nameRegex } from '../../../framework/backend';
import { badRequest } from '../../../framework/errors';
import type { FieldData } from '../../../framework/fields';
import { pemBlocks } from '../../../crypto/pem';
import { constantTimeEqual } from '../../../crypto/timing';
import { isAsymmetric, isEcdsa, isRsa } from '../key-types';
import { existingKey } from './keys';
import { editable, type KeyPolicy, type KeyVersion } from '../policy';
import { savePolicy } from '../store';

const CURVES = { 'ecdsa-p256': ['P-256', 'SHA-256'], 'ecdsa-p384': ['P-384', 'SHA-384'], 'ecdsa-p521': ['P-521', 'SHA-512'] } as const;

/** The WebCrypto algorithm a version signs its CSR with (Vault: SHA-256 for RSA, the curve's hash for ECDSA). */
function signingAlgorithm(key: AsymmetricKey): SubtleCryptoImportKeyAlgorithm {
  if (isRsa(key.type)) return { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
  if (isEcdsa(key.type)) {
    const [namedCurve, hash] = CURVES[key.type];
    return { name: 'ECDSA', namedCurve, hash };
  }
  return { name: 'Ed25519' };
}

/** The version a request names (0 or absent: the latest), which must exist. */
function versionOf(p: KeyPolicy, f: FieldData): { version: number; entry: KeyVersion } {
  const version = f.get<number>('version') || p.latestVersion;
  const entry = p.versions.get(version);
  if (!entry) throw badRequest(`could not find version ${version} of key ${p.name}`);
  return { version, entry };
}

function asymmetricKey(p: KeyPolicy): void {
  if (!isAsymmetric(p.type)) throw badRequest(`key type ${p.type} does not support certificates: an asymmetric key is needed`);
  if (p.derived) throw badRequest('certificates are not supported for derived keys');
}

async function csr(req: LogicalRequest, f: FieldData) {
  const p = await existingKey(req, f.get<string>('name'));
  asymmetricKey(p);
  const { version, entry } = versionOf(p, f);
  const key = entry.asym;
  if (!key?.privateKey) throw badRequest('requested version for signing does not contain a private part');
  let template: x509.Pkcs10CertificateRequest | null = null;
  const pem = f.get<string>('csr');
  if (pem !== '') {
    try {
      template = new x509.Pkcs10CertificateRequest(pem);
    } catch {
      throw badRequest('could not parse the provided CSR template');
    }
  }
  const algorithm = signingAlgorithm(key);
  const keys = {
    privateKey: await crypto.subtle.importKey('pkcs8', key.privateKey, algorithm, false, ['sign']),
    publicKey: await crypto.subtle.importKey('spki', key.publicKey, algorithm, true, ['verify']),
  };
  // The template gives the subject and extensions; the key and signature are this version's.
  const request = await x509.Pkcs10CertificateRequestGenerator.create({
    name: template ? template.subjectName : '',
    keys,
    signingAlgorithm: algorithm,
    extensions: template ? template.extensions : [],
  });
  return { data: { name: p.name, version, csr: request.toString('pem') } };
}

/** The PEM certificates of a chain, leaf first. */
function parseChain(text: string): x509.X509Certificate[] {
  const blocks = pemBlocks(text, 'CERTIFICATE');
  if (blocks.length === 0) throw badRequest('certificate_chain holds no PEM certificate');
  try {
    return blocks.map(({ der }) => new x509.X509Certificate(der));
  } catch {
    throw badRequest('could not parse the certificate chain');
  }
}

async function setCertificate(req: LogicalRequest, f: FieldData) {
  const p = await existingKey(req, f.get<string>('name'));
  asymmetricKey(p);
  const { version, entry } = versionOf(p, f);
  const chain = parseChain(f.get<string>('certificate_chain'));
  const leaf = new Uint8Array(chain[0].publicKey.rawData);
  if (!entry.asym || !constantTimeEqual(leaf, entry.asym.publicKey)) {
    throw badRequest(`the leaf certificate's public key does not match version ${version} of key ${p.name}`);
  }
  const next = editable(p);
  next.versions.set(version, { ...entry, certificateChain: chain.map((c) => c.toString('pem')) });
  await savePolicy(req.storage, next);
  return null;
}

export function certificatePaths(): PathDef[] {
  const name = { type: 'string', description: 'Key name', required: true } as const;
  const version = { type: 'int', description: 'Key version (0: the latest)' } as const;
  return [
    {
      pattern: `keys/${nameRegex('name')}/csr`,
      fields: { name, version, csr: { type: 'string', description: 'PEM CSR whose subject and extensions to use' } },
      summary: 'Make a CSR signed by an asymmetric key version.',
      operations: { update: csr },
    },
    {
      pattern: `keys/${nameRegex('name')}/set-certificate`,
      fields: { name, version, certificate_chain: { type: 'string', description: 'PEM certificates, leaf first', required: true } },
      summary: 'Keep the certificate chain issued for a key version.',
      operations: { update: setCertificate },
    },
  ];
}
