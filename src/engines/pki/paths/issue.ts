// issue/:role, issuer/:ref/issue/:role, sign/:role and issuer/:ref/sign/:role. The issuer is the
// role's issuer_ref unless the path names one (ACLs can keep callers off the issuer/ paths).

import { parseCsr } from '../../../crypto/pki/csr';
import { resolveKeyBits, type PkiKeyType } from '../../../crypto/pki/keys';
import { nameRegex, type LogicalRequest, type PathDef } from '../../../framework/backend';
import { badRequest } from '../../../framework/errors';
import type { FieldData, FieldSchemas } from '../../../framework/fields';
import { checkFormat } from '../authority';
import { checkCsrKey, fetchIssuer, issueLeaf, ISSUER_REF_FIELD, LEAF_FIELDS, ROLE_PATH_FIELD } from '../leaf';
import { loadRole, type RoleEntry } from '../role';
import { requestKeyAccess } from '../signers';
import type { ManagedKeyAccess } from '../../../managed-keys/access';

// An issue reads its role twice (which key it will make, then the issue itself): once from storage.
const rolesRead = new WeakMap<LogicalRequest, Map<string, RoleEntry | null>>();

async function roleOf(req: LogicalRequest, name: string): Promise<RoleEntry | null> {
  let read = rolesRead.get(req);
  if (!read) rolesRead.set(req, (read = new Map()));
  if (!read.has(name)) read.set(name, await loadRole(req.storage, name));
  return read.get(name) ?? null;
}

/** The role a path names (400 `unknown role: X`, as Vault answers). */
export async function namedRole(req: LogicalRequest, name: string): Promise<RoleEntry> {
  const role = await roleOf(req, name);
  if (!role) throw badRequest(`unknown role: ${name}`);
  return role;
}

/** The issuer: the path's issuer_ref on issuer/:ref/... paths, else the role's. */
const issuerRefFor = (f: FieldData, role: RoleEntry): string =>
  f.has('issuer_ref') ? f.get<string>('issuer_ref') : role.issuerRef || 'default';

async function issue(managedKeys: ManagedKeyAccess | undefined, req: LogicalRequest, f: FieldData) {
  let role = await namedRole(req, f.get<string>('role'));
  const warnings: string[] = [];
  const typeGiven = f.has('key_type');
  const bitsGiven = f.has('key_bits');
  // Spec: an `any` role is for signing only; it cannot generate keys.
  if (role.keyType === 'any') throw badRequest('role key type "any" not allowed for issuing certificates, only signing');
  if (typeGiven || bitsGiven) {
    warnings.push('parameters key_type and key_bits ignored as role had specific values');
  }
  checkFormat(f.get<string>('format'));
  const issuer = await fetchIssuer(req, issuerRefFor(f, role), requestKeyAccess(managedKeys, req));
  if (role.keyType === 'rsa' && role.keyBits < 2048) throw badRequest('RSA keys < 2048 bits are unsafe and not supported');
  const { response } = await issueLeaf(req, f, role, issuer, { kind: 'issue', keyType: role.keyType as PkiKeyType, keyBits: role.keyBits });
  if (warnings.length > 0) response.warnings = [...(response.warnings ?? []), ...warnings];
  return response;
}

async function sign(managedKeys: ManagedKeyAccess | undefined, req: LogicalRequest, f: FieldData) {
  const role = await namedRole(req, f.get<string>('role'));
  checkFormat(f.get<string>('format'));
  const issuer = await fetchIssuer(req, issuerRefFor(f, role), requestKeyAccess(managedKeys, req));
  const csr = await parseCsr(f.get<string>('csr'));
  checkCsrKey(role, csr);
  const { response } = await issueLeaf(req, f, role, issuer, { kind: 'sign', csr });
  return response;
}

const ISSUE_FIELDS: FieldSchemas = {
  ...LEAF_FIELDS,
  key_type: { type: 'string', description: 'Key type when the role allows any (rsa, ec, ed25519)' },
  key_bits: { type: 'int', description: 'Key size when the role allows any key type' },
};
const SIGN_FIELDS: FieldSchemas = { ...LEAF_FIELDS, csr: { type: 'string', description: 'PEM CSR to sign' } };

/** An issue under an RSA role makes an RSA key: outside the mount's object. */
async function issueRsaKeyBits(req: LogicalRequest, f: FieldData): Promise<number[]> {
  const role = await roleOf(req, f.get<string>('role'));
  if (role?.keyType !== 'rsa') return [];
  try {
    return [resolveKeyBits('rsa', role.keyBits).bits];
  } catch {
    return [];
  }
}

export function issuePaths(managedKeys?: ManagedKeyAccess): PathDef[] {
  const issueOp = (req: LogicalRequest, f: FieldData) => issue(managedKeys, req, f);
  const signOp = (req: LogicalRequest, f: FieldData) => sign(managedKeys, req, f);
  return [
    {
      pattern: `issue/${nameRegex('role')}`,
      fields: { role: ROLE_PATH_FIELD, ...ISSUE_FIELDS },
      rsaKeysNeeded: issueRsaKeyBits,
      summary: 'Issue a certificate and private key under a role.',
      operations: { update: issueOp },
    },
    {
      pattern: `issuer/${nameRegex('issuer_ref')}/issue/${nameRegex('role')}`,
      fields: { role: ROLE_PATH_FIELD, issuer_ref: ISSUER_REF_FIELD, ...ISSUE_FIELDS },
      rsaKeysNeeded: issueRsaKeyBits,
      summary: 'Issue a certificate and private key under a role, from the named issuer.',
      operations: { update: issueOp },
    },
    {
      pattern: `sign/${nameRegex('role')}`,
      fields: { role: ROLE_PATH_FIELD, ...SIGN_FIELDS },
      summary: 'Sign a CSR under a role.',
      operations: { update: signOp },
    },
    {
      pattern: `issuer/${nameRegex('issuer_ref')}/sign/${nameRegex('role')}`,
      fields: { role: ROLE_PATH_FIELD, issuer_ref: ISSUER_REF_FIELD, ...SIGN_FIELDS },
      summary: 'Sign a CSR under a role, with the named issuer.',
      operations: { update: signOp },
    },
  ];
}
