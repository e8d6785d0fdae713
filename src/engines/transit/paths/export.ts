// export/:type/:name(/:version): a key's material in the forms Vault exports (reference §6.10).

import type { PathDef } from '../../../framework/backend';
import { nameRegex } from '../../../framework/backend';
import { ecPrivateKeyPem, ed25519PublicRaw, ed25519Private64, publicKeyPem, rsaPrivateKeyPem } from '../../../crypto/transit/key-encoding';
import { toBase64 } from '../../../crypto/encoding';
import { badRequest, notFound } from '../../../framework/errors';
import { NO_EXPORT } from '../managed/create';
import { isCipher, isEcdsa, isRsa, supportsEncryption, supportsSigning } from '../key-types';
import type { KeyPolicy, KeyVersion } from '../policy';
import { loadPolicy } from '../store';

const EXPORT_TYPES = new Set(['encryption-key', 'signing-key', 'hmac-key', 'public-key', 'certificate-chain', 'cmac-key']);

/**
 * The versions an export names: "" = every version Vault keeps live (from min_decryption_version
 * up), "latest", or a number (optionally "v"-prefixed). Shared with byok-export.
 */
export function exportVersions(p: KeyPolicy, version: string): [number, KeyVersion][] {
  if (version === '') return [...p.versions].filter(([n]) => n >= p.minDecryptionVersion).sort((a, b) => a[0] - b[0]);
  let n = p.latestVersion;
  if (version !== 'latest') {
    const digits = version.startsWith('v') ? version.slice(1) : version;
    if (!/^[-+]?\d+$/.test(digits) || !Number.isSafeInteger(Number(digits))) throw badRequest('invalid key version');
    n = Number(digits);
  }
  if (n < p.minDecryptionVersion) throw badRequest('version for export is below minimum decryption version');
  const entry = p.versions.get(n);
  if (!entry) throw badRequest('version does not exist or cannot be found');
  return [[n, entry]];
}

const noKeyFor = (p: KeyPolicy, exportType: string) => badRequest(`unknown key type ${p.type} for export type ${exportType}`);

/** One version's value; an empty string for the private half of a public-only version (as Vault). */
function exportValue(p: KeyPolicy, v: KeyVersion, exportType: string): string {
  const asym = v.asym;
  switch (exportType) {
    case 'hmac-key':
      return toBase64(v.hmacKey);
    case 'encryption-key':
      if (isCipher(p.type) && v.key) return toBase64(v.key);
      if (isRsa(p.type) && asym) return asym.privateKey ? rsaPrivateKeyPem(asym) : '';
      throw noKeyFor(p, exportType);
    case 'signing-key':
      if (!asym) throw noKeyFor(p, exportType);
      if (!asym.privateKey) return '';
      if (isRsa(p.type)) return rsaPrivateKeyPem(asym);
      if (isEcdsa(p.type)) return ecPrivateKeyPem(asym).trim();
      return toBase64(v.key ?? ed25519Private64(asym));
    case 'public-key':
      if (!asym) throw noKeyFor(p, exportType);
      if (p.type === 'ed25519') return toBase64(ed25519PublicRaw(asym));
      // RSA keeps PEM's trailing newline; ECDSA is trimmed (as Vault's encoders differ).
      return isRsa(p.type) ? publicKeyPem(asym) : publicKeyPem(asym).trim();
    case 'certificate-chain':
      if (!v.certificateChain?.length) throw badRequest('selected key version does not have a certificate chain imported');
      return v.certificateChain.map((pem) => pem.trim()).join('\n');
  }
  throw noKeyFor(p, exportType);
}

export function exportPaths(): PathDef[] {
  return [
    {
      pattern: `export/${nameRegex('type')}/${nameRegex('name')}(?:/(?<version>[^/]+))?`,
      fields: {
        type: { type: 'string', description: 'encryption-key, signing-key, hmac-key, public-key or certificate-chain', required: true },
        name: { type: 'string', description: 'Key name', required: true },
        version: { type: 'string', description: 'Version to export: a number or "latest" (default: all)' },
      },
      summary: "Export a key's material (exportable keys; public keys always).",
      operations: {
        read: async (req, f) => {
          const exportType = f.get<string>('type');
          if (!EXPORT_TYPES.has(exportType)) throw badRequest(`invalid export type: ${exportType}`);
          if (exportType === 'cmac-key') throw badRequest('CMAC operations are only available in enterprise versions of Vault');
          const p = await loadPolicy(req.storage, f.get<string>('name'));
          if (!p) throw notFound();
          if (p.type === 'managed_key') throw badRequest(NO_EXPORT);
          if (!p.exportable && exportType !== 'public-key' && exportType !== 'certificate-chain') {
            throw badRequest('private key material is not exportable');
          }
          if (exportType === 'encryption-key' && !supportsEncryption(p.type)) throw badRequest('encryption not supported for the key');
          if (exportType === 'signing-key' && !supportsSigning(p.type)) throw badRequest('signing not supported for the key');
          if (exportType === 'certificate-chain' && !supportsSigning(p.type)) {
            throw badRequest('certificate chain not supported for keys that do not support signing');
          }
          const keys: Record<string, string> = {};
          for (const [n, v] of exportVersions(p, f.get<string>('version'))) keys[n] = exportValue(p, v, exportType);
          return { data: { name: p.name, type: p.type, keys } };
        },
      },
    },
  ];
}
