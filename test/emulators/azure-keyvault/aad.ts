// The emulated Entra ID (Azure AD): the v2.0 token endpoint's client-credentials grant for the app
// registrations of each tenant, and the OpenID metadata MSAL reads before asking for a token.
// Access tokens are JWTs (RS256, signed with a key made at start-up) shaped like Key Vault's v1
// tokens: aud = the resource, iss = https://sts.windows.net/<tenant>/, appid = the client.
import { generateKeyPairSync, randomBytes, randomUUID, timingSafeEqual, type KeyObject } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import { AadError } from './errors';
import type { Tenant } from './state';

/** The key store resources Entra ID knows in every tenant (plus each registered vault's own). */
const KNOWN_RESOURCES = ['vault.azure.net', 'vault.azure.cn', 'vault.usgovcloudapi.net', 'vault.microsoftazure.de'];
/** Scopes MSAL may add that are not a resource. */
const OIDC_SCOPES = new Set(['openid', 'profile', 'offline_access']);

export interface AccessClaims extends JWTPayload {
  tid: string;
  appid: string;
  oid: string;
  uti: string;
}

export type TokenCheck = { ok: true; claims: AccessClaims } | { ok: false; why: 'expired' | 'invalid' };

export class TokenIssuer {
  private readonly privateKey: KeyObject;
  private readonly publicKey: KeyObject;
  private readonly kid = randomBytes(8).toString('hex');
  /** A stable object id per (tenant, client), as a service principal has. */
  private readonly oids = new Map<string, string>();

  constructor() {
    const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
    this.privateKey = pair.privateKey;
    this.publicKey = pair.publicKey;
  }

  async issue(tenant: Tenant, clientId: string, resource: string): Promise<{ token: string; uti: string }> {
    const key = `${tenant.id}\n${clientId}`;
    if (!this.oids.has(key)) this.oids.set(key, randomUUID());
    const oid = this.oids.get(key)!;
    const now = Math.floor(Date.now() / 1000);
    const uti = randomBytes(16).toString('base64url');
    const issuer = `https://sts.windows.net/${tenant.id}/`;
    const token = await new SignJWT({ aud: resource, iss: issuer, idp: issuer, appid: clientId, appidacr: '1', oid, sub: oid, tid: tenant.id, uti, ver: '1.0' })
      .setProtectedHeader({ typ: 'JWT', alg: 'RS256', kid: this.kid })
      .setIssuedAt(now)
      .setNotBefore(now - 300)
      .setExpirationTime(now + tenant.tokenLifetime)
      .sign(this.privateKey);
    return { token, uti };
  }

  /** Signature and lifetime; the audience and issuer are the vault's to judge. */
  async check(token: string): Promise<TokenCheck> {
    try {
      const { payload } = await jwtVerify(token, this.publicKey, { algorithms: ['RS256'] });
      if (typeof payload.tid !== 'string' || typeof payload.appid !== 'string') return { ok: false, why: 'invalid' };
      return { ok: true, claims: payload as AccessClaims };
    } catch (e) {
      return { ok: false, why: e instanceof joseErrors.JWTExpired ? 'expired' : 'invalid' };
    }
  }
}

const required = (name: string) => new AadError(400, 'invalid_request', 900144, `The request body must contain the following parameter: '${name}'.`);

export const tenantNotFound = (tenantId: string) =>
  new AadError(
    400,
    'invalid_request',
    90002,
    `Tenant '${tenantId}' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud. Check with your subscription administrator, this may happen if there are no active subscriptions for the tenant.`,
  );

/** POST /<tenant>/oauth2/v2.0/token: the token answer, or the AadError to answer with. */
export async function grantToken(issuer: TokenIssuer, tenant: Tenant, form: URLSearchParams): Promise<{ clientId: string; scope: string; body: unknown; uti: string }> {
  const grant = form.get('grant_type');
  if (!grant) throw required('grant_type');
  if (grant !== 'client_credentials') throw new AadError(400, 'unsupported_grant_type', 70003, `The app requested an unsupported grant type '${grant}'.`);
  const clientId = form.get('client_id');
  if (!clientId) throw required('client_id');
  const secret = tenant.clients.get(clientId);
  if (secret === undefined) {
    throw new AadError(
      400,
      'unauthorized_client',
      700016,
      `Application with identifier '${clientId}' was not found in the directory '${tenant.id}'. This can happen if the application has not been installed by the administrator of the tenant or consented to by any user in the tenant. You may have sent your authentication request to the wrong tenant.`,
    );
  }
  const given = form.get('client_secret');
  if (given === null || given === '') throw new AadError(401, 'invalid_client', 7000218, "The request body must contain the following parameter: 'client_assertion' or 'client_secret'.");
  const a = Buffer.from(given);
  const b = Buffer.from(secret);
  if (a.length !== b.length || !timingSafeEqual(a, b)) {
    throw new AadError(
      401,
      'invalid_client',
      7000215,
      `Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '${clientId}'.`,
    );
  }
  const scopeParam = form.get('scope');
  if (!scopeParam) throw required('scope');
  const scopes = scopeParam.split(/\s+/).filter((s) => s && !OIDC_SCOPES.has(s));
  if (scopes.length !== 1 || !scopes[0].endsWith('/.default')) {
    throw new AadError(
      400,
      'invalid_scope',
      1002012,
      `The provided value for scope ${scopeParam} is not valid. Client credential flows must have a scope value with /.default suffixed to the resource identifier (application ID URI).`,
    );
  }
  const resource = scopes[0].slice(0, -'/.default'.length).replace(/\/+$/, '');
  const known = new Set([...KNOWN_RESOURCES, ...tenant.vaults.map((v) => v.resource)].map((r) => `https://${r}`));
  if (!known.has(resource.toLowerCase())) {
    throw new AadError(
      400,
      'invalid_resource',
      500011,
      `The resource principal named ${resource} was not found in the tenant named ${tenant.id}. This can happen if the application has not been installed by the administrator of the tenant or consented to by any user in the tenant. You might have sent your authentication request to the wrong tenant.`,
    );
  }
  const { token, uti } = await issuer.issue(tenant, clientId, resource.toLowerCase());
  return { clientId, scope: scopes[0], uti, body: { token_type: 'Bearer', expires_in: tenant.tokenLifetime, ext_expires_in: tenant.tokenLifetime, access_token: token } };
}

/** GET /<tenant>/v2.0/.well-known/openid-configuration (what MSAL resolves the authority with). */
export function openidConfiguration(base: string, tenantId: string): unknown {
  const at = `${base}/${tenantId}`;
  return {
    token_endpoint: `${at}/oauth2/v2.0/token`,
    token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt', 'client_secret_basic'],
    jwks_uri: `${at}/discovery/v2.0/keys`,
    response_modes_supported: ['query', 'fragment', 'form_post'],
    subject_types_supported: ['pairwise'],
    id_token_signing_alg_values_supported: ['RS256'],
    response_types_supported: ['code', 'id_token', 'code id_token', 'id_token token'],
    scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
    issuer: `${at}/v2.0`,
    request_uri_parameter_supported: false,
    authorization_endpoint: `${at}/oauth2/v2.0/authorize`,
    device_authorization_endpoint: `${at}/oauth2/v2.0/devicecode`,
    end_session_endpoint: `${at}/oauth2/v2.0/logout`,
    tenant_region_scope: null,
    cloud_instance_name: 'microsoftonline.com',
    cloud_graph_host_name: 'graph.windows.net',
    msgraph_host: 'graph.microsoft.com',
  };
}
