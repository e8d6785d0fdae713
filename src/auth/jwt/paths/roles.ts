// auth/<mount>/role/:name and LIST role: what a login must present (audiences, subject, bound
// claims), how its identity is read from the claims, the OIDC settings, and the token it gets.

import type { LogicalRequest, PathDef } from '../../../framework/backend';
import { badRequest, notFound } from '../../../framework/errors';
import type { FieldData, FieldSchemas } from '../../../framework/fields';
import { getJSON, putJSON, type Storage } from '../../../framework/storage';
import { nameRegex } from '../../../framework/backend';
import { checkTokenLimits, emptyTokenParams, parseTokenFields, TOKEN_FIELDS, tokenFieldsView, type TokenParams } from '../../token/fields';
import { goValue } from '../claims';

export interface JwtRole {
  roleType: 'oidc' | 'jwt';
  /** Seconds; 0 means the default (150, 150, 60), negative disables. */
  expirationLeeway: number;
  notBeforeLeeway: number;
  clockSkewLeeway: number;
  boundAudiences: string[];
  boundSubject: string;
  /** 'string' or 'glob'. */
  boundClaimsType: string;
  boundClaims: Record<string, unknown> | null;
  claimMappings: Record<string, string> | null;
  userClaim: string;
  userClaimJsonPointer: boolean;
  groupsClaim: string;
  oidcScopes: string[];
  allowedRedirectUris: string[];
  verboseOidcLogging: boolean;
  /** Seconds; 0 = not sent. */
  maxAge: number;
  token: TokenParams;
}

const ROLE_PREFIX = 'role/';
const RESERVED_METADATA = ['role'];

/** The role, or null. Names are case-insensitive (stored lowercased). */
export async function loadRole(storage: Storage, name: string): Promise<JwtRole | null> {
  return getJSON<JwtRole>(storage, ROLE_PREFIX + name.toLowerCase());
}

/** What a leeway of 0 stands for at validation (seconds); -1 disables a leeway. */
export const DEFAULT_EXPIRATION_LEEWAY = 150;
export const DEFAULT_NOT_BEFORE_LEEWAY = 150;
export const DEFAULT_CLOCK_SKEW_LEEWAY = 60;

/** A new role: the leeways start at the values that 0 stands for, so a read shows them. */
const emptyRole = (): JwtRole => ({
  roleType: 'oidc',
  expirationLeeway: DEFAULT_EXPIRATION_LEEWAY,
  notBeforeLeeway: DEFAULT_NOT_BEFORE_LEEWAY,
  clockSkewLeeway: DEFAULT_CLOCK_SKEW_LEEWAY,
  boundAudiences: [],
  boundSubject: '',
  boundClaimsType: 'string',
  boundClaims: null,
  claimMappings: null,
  userClaim: '',
  userClaimJsonPointer: false,
  groupsClaim: '',
  oidcScopes: [],
  allowedRedirectUris: [],
  verboseOidcLogging: false,
  maxAge: 0,
  token: emptyTokenParams(),
});

const roleFields: FieldSchemas = {
  name: { type: 'lowercase-string', description: 'Name of the role.' },
  role_type: { type: 'string', description: "Type of the role, either 'jwt' or 'oidc'." },
  expiration_leeway: { type: 'signed-duration', description: 'Leeway (seconds) on exp; 0 means 150, -1 disables.' },
  not_before_leeway: { type: 'signed-duration', description: 'Leeway (seconds) on nbf; 0 means 150, -1 disables.' },
  clock_skew_leeway: { type: 'signed-duration', description: 'Leeway (seconds) on every time claim; 0 means 60, -1 disables.' },
  bound_subject: { type: 'string', description: "The 'sub' claim that is valid for login." },
  bound_audiences: { type: 'comma-string-list', description: "'aud' claims that are valid for login; any match is sufficient." },
  bound_claims_type: { type: 'string', description: "How bound_claims values are matched: 'string' or 'glob'." },
  bound_claims: { type: 'map', description: 'Claims (JSON pointers allowed) and the values one of which must match.' },
  claim_mappings: { type: 'string-map', description: 'Claims (JSON pointers allowed) copied to metadata fields.' },
  user_claim: { type: 'string', description: 'The claim used as the identity entity alias name.' },
  user_claim_json_pointer: { type: 'bool', description: 'user_claim is a JSON pointer.' },
  groups_claim: { type: 'string', description: 'The claim used for identity group alias names.' },
  oidc_scopes: { type: 'comma-string-list', description: 'OIDC scopes requested besides openid.' },
  allowed_redirect_uris: { type: 'comma-string-list', description: 'Allowed values of redirect_uri.' },
  verbose_oidc_logging: { type: 'bool', description: 'Log received OIDC tokens and claims at debug level.' },
  max_age: { type: 'duration', description: 'Allowed seconds since the user last authenticated with the provider.' },
  ...TOKEN_FIELDS,
};

function roleView(r: JwtRole): Record<string, unknown> {
  return {
    role_type: r.roleType,
    expiration_leeway: r.expirationLeeway,
    not_before_leeway: r.notBeforeLeeway,
    clock_skew_leeway: r.clockSkewLeeway,
    bound_audiences: r.boundAudiences,
    bound_subject: r.boundSubject,
    bound_claims_type: r.boundClaimsType,
    bound_claims: r.boundClaims,
    claim_mappings: r.claimMappings,
    user_claim: r.userClaim,
    user_claim_json_pointer: r.userClaimJsonPointer,
    groups_claim: r.groupsClaim,
    allowed_redirect_uris: r.allowedRedirectUris,
    oidc_scopes: r.oidcScopes,
    verbose_oidc_logging: r.verboseOidcLogging,
    max_age: r.maxAge,
    ...tokenFieldsView(r.token),
  };
}

/** Glob bound claims must be strings or lists of strings (string mode takes any JSON value). */
function checkGlobClaims(bound: Record<string, unknown>): void {
  for (const value of Object.values(bound)) {
    const list = Array.isArray(value) ? value : typeof value === 'string' || typeof value === 'boolean' || typeof value === 'number' ? [value] : null;
    if (!list) throw badRequest(`claim is not a string or list: ${goValue(value)}`);
    for (const item of list) if (typeof item !== 'string') throw badRequest(`claim is not a string: ${goValue(item)}`);
  }
}

function checkClaimMappings(mappings: Record<string, string>): void {
  const targets = new Set<string>();
  for (const target of Object.values(mappings)) {
    if (RESERVED_METADATA.includes(target)) throw badRequest(`metadata key ${JSON.stringify(target)} is reserved and may not be a mapping destination`);
    if (targets.has(target)) throw badRequest(`multiple keys are mapped to metadata key ${JSON.stringify(target)}`);
    targets.add(target);
  }
}

/**
 * Applies a write onto the stored role (or a new one), with Vault's checks in its order.
 * Unlike Vault, an update that omits role_type or bound_claims_type keeps the stored value
 * instead of resetting it to the default.
 */
function applyWrite(current: JwtRole, f: FieldData, mountMaxTTL: number): { role: JwtRole; warnings: string[] } {
  const r: JwtRole = { ...current };
  if (f.has('role_type')) {
    const type = f.get<string>('role_type') || 'oidc';
    if (type !== 'jwt' && type !== 'oidc') throw badRequest(`invalid 'role_type': ${type}`);
    r.roleType = type;
  }
  r.token = parseTokenFields(current.token, f);
  const warnings = checkTokenLimits(r.token, mountMaxTTL);

  if (f.has('expiration_leeway')) r.expirationLeeway = f.get('expiration_leeway');
  if (f.has('not_before_leeway')) r.notBeforeLeeway = f.get('not_before_leeway');
  if (f.has('clock_skew_leeway')) r.clockSkewLeeway = f.get('clock_skew_leeway');
  if (f.has('bound_audiences')) r.boundAudiences = f.get('bound_audiences');
  if (f.has('bound_subject')) r.boundSubject = f.get('bound_subject');
  if (f.has('verbose_oidc_logging')) r.verboseOidcLogging = f.get('verbose_oidc_logging');
  if (f.has('max_age')) r.maxAge = f.get('max_age');
  if (f.has('bound_claims_type')) {
    const type = f.get<string>('bound_claims_type') || 'string';
    if (type !== 'string' && type !== 'glob') throw badRequest(`invalid 'bound_claims_type': ${type}`);
    r.boundClaimsType = type;
  }
  if (f.has('bound_claims')) r.boundClaims = f.get('bound_claims');
  if (r.boundClaimsType === 'glob' && r.boundClaims) checkGlobClaims(r.boundClaims);
  if (f.has('claim_mappings')) {
    const mappings = f.get<Record<string, string>>('claim_mappings');
    checkClaimMappings(mappings);
    r.claimMappings = mappings;
  }
  if (f.has('user_claim')) r.userClaim = f.get('user_claim');
  if (r.userClaim === '') throw badRequest('a user claim must be defined on the role');
  if (f.has('user_claim_json_pointer')) r.userClaimJsonPointer = f.get('user_claim_json_pointer');
  if (f.has('groups_claim')) r.groupsClaim = f.get('groups_claim');
  if (f.has('oidc_scopes')) r.oidcScopes = f.get('oidc_scopes');
  if (f.has('allowed_redirect_uris')) r.allowedRedirectUris = f.get('allowed_redirect_uris');

  if (r.roleType === 'oidc' && r.allowedRedirectUris.length === 0) {
    throw badRequest("'allowed_redirect_uris' must be set if 'role_type' is 'oidc' or unspecified.");
  }
  // OIDC logins always check the audience against the client id; JWT roles need some binding.
  const bound = r.boundAudiences.length > 0 || r.token.boundCidrs.length > 0 || r.boundSubject !== '' || Object.keys(r.boundClaims ?? {}).length > 0;
  if (r.roleType !== 'oidc' && !bound) throw badRequest('must have at least one bound constraint when creating/updating a role');

  if (r.verboseOidcLogging) {
    warnings.push('verbose_oidc_logging has been enabled for this role. This is not recommended in production since sensitive information may be present in OIDC responses.');
  }
  return { role: r, warnings };
}

export function rolePaths(): PathDef[] {
  const write = async (req: LogicalRequest, f: FieldData) => {
    const name = f.get<string>('name');
    if (name === '') throw badRequest('missing role name');
    const { role, warnings } = applyWrite((await loadRole(req.storage, name)) ?? emptyRole(), f, req.mountConfig.maxLeaseTTL);
    await putJSON(req.storage, ROLE_PREFIX + name, role);
    return warnings.length > 0 ? { warnings } : null;
  };
  return [
    {
      pattern: 'role/?',
      summary: 'Lists all the roles registered with the backend.',
      operations: {
        list: async (req) => {
          const keys = await req.storage.list(ROLE_PREFIX);
          if (keys.length === 0) throw notFound();
          return { data: { keys } };
        },
      },
    },
    {
      pattern: `role/${nameRegex('name')}`,
      fields: roleFields,
      summary: 'Register, read, update or delete a role.',
      existenceCheck: async (req, f) => (await loadRole(req.storage, f.get('name'))) !== null,
      operations: {
        read: async (req, f) => {
          const role = await loadRole(req.storage, f.get('name'));
          if (!role) throw notFound();
          return { data: roleView(role) };
        },
        create: write,
        update: write,
        delete: async (req, f) => {
          await req.storage.delete(ROLE_PREFIX + f.get<string>('name'));
          return null;
        },
      },
    },
  ];
}
