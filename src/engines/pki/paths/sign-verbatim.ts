// sign-verbatim(/:role) and issuer/:ref/sign-verbatim(/:role): the CSR's values as they are, under
// an implicit permissive role (reference §1.3). A named role only contributes ttl, max_ttl,
// generate_lease, no_store, its issuer and not_before_duration. Never a CA certificate.

import { parseCsr } from '../../../crypto/pki/csr';
import { nameRegex, type LogicalRequest, type PathDef } from '../../../framework/backend';
import { badRequest } from '../../../framework/errors';
import type { FieldData, FieldSchemas } from '../../../framework/fields';
import { checkFormat } from '../authority';
import { namedRole } from './issue';
import { checkCsrKey, fetchIssuer, issueLeaf, ISSUER_REF_FIELD, LEAF_FIELDS } from '../leaf';
import { DEFAULT_KEY_USAGE, isOid, permissiveRole, type RoleEntry } from '../role';
import { requestKeyAccess } from '../signers';
import type { ManagedKeyAccess } from '../../../managed-keys/access';

/** The implicit role: any name, any key, CSR values, `*` for other SANs, serials, URIs, user ids. */
export function verbatimRole(f: FieldData, role: RoleEntry | null): RoleEntry {
  return permissiveRole({
    ttl: role && role.ttl > 0 ? role.ttl : 0,
    maxTtl: role && role.maxTtl > 0 ? role.maxTtl : 0,
    notBeforeDuration: role && role.notBeforeDuration > 0 ? role.notBeforeDuration : 0,
    signatureBits: f.get<number>('signature_bits'),
    usePss: f.get<boolean>('use_pss'),
    keyUsage: f.get<string[]>('key_usage'),
    extKeyUsage: f.get<string[]>('ext_key_usage'),
    // Vault drops OIDs it cannot parse here rather than refusing the request.
    extKeyUsageOids: f.get<string[]>('ext_key_usage_oids').filter(isOid),
    useCsrCommonName: true,
    useCsrSans: true,
    generateLease: role?.generateLease ?? false,
    noStore: role?.noStore ?? false,
    issuerRef: role?.issuerRef || 'default',
  });
}

async function signVerbatim(managedKeys: ManagedKeyAccess | undefined, req: LogicalRequest, f: FieldData) {
  const named = f.has('role') && f.get<string>('role') !== '' ? await namedRole(req, f.get<string>('role')) : null;
  const role = verbatimRole(f, named);
  checkFormat(f.get<string>('format'));
  const issuer = await fetchIssuer(req, f.has('issuer_ref') ? f.get<string>('issuer_ref') : role.issuerRef, requestKeyAccess(managedKeys, req));
  const csr = await parseCsr(f.get<string>('csr'));
  if (csr.basicConstraints?.ca) {
    throw badRequest('sign-verbatim refuses to issue an intermediate CA: the CSR asks for CA:TRUE basic constraints (use sign-intermediate)');
  }
  checkCsrKey(role, csr);
  const { response } = await issueLeaf(req, f, role, issuer, {
    kind: 'verbatim',
    csr,
    requestedOtherSans: f.get<string[]>('other_sans').length > 0,
  });
  return response;
}

const FIELDS: FieldSchemas = {
  ...LEAF_FIELDS,
  csr: { type: 'string', description: 'PEM CSR to sign as it is' },
  key_usage: { type: 'comma-string-list', description: 'Key usages, when the CSR has none', default: DEFAULT_KEY_USAGE },
  ext_key_usage: { type: 'comma-string-list', description: 'Extended key usages, when the CSR has none' },
  ext_key_usage_oids: { type: 'comma-string-list', description: 'Extended key usage OIDs, when the CSR has none' },
  signature_bits: { type: 'int', description: 'Hash size of RSA signatures (0: default)' },
  use_pss: { type: 'bool', description: 'PSS signatures from RSA issuers' },
};
const ROLE_FIELD = { type: 'string', description: 'Role whose ttl, max_ttl, generate_lease, no_store and issuer apply' } as const;

export function signVerbatimPaths(managedKeys?: ManagedKeyAccess): PathDef[] {
  const update = (req: LogicalRequest, f: FieldData) => signVerbatim(managedKeys, req, f);
  return [
    {
      pattern: `sign-verbatim(?:/${nameRegex('role')})?`,
      fields: { role: ROLE_FIELD, ...FIELDS },
      summary: "Sign a CSR with the CSR's own values.",
      operations: { update },
    },
    {
      pattern: `issuer/${nameRegex('issuer_ref')}/sign-verbatim(?:/${nameRegex('role')})?`,
      fields: { role: ROLE_FIELD, issuer_ref: ISSUER_REF_FIELD, ...FIELDS },
      summary: "Sign a CSR with the CSR's own values, with the named issuer.",
      operations: { update },
    },
  ];
}
