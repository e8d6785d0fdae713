// provider_config "gsuite": Google Workspace group membership and custom user schemas, read from
// the Admin SDK Directory API with a service account acting for a Workspace admin (domain-wide
// delegation): the service account signs a JWT-bearer grant at its key's token_uri, and the
// access token (kept until shortly before it expires) reads groups (optionally recursing into
// groups of groups) and users. The service account key is given as JSON content: a Worker has no
// files to read a key path from.

import { importPKCS8, SignJWT, type CryptoKey } from 'jose';
import { option } from './provider-options';

/** The Admin SDK's base URL; a host may point it elsewhere (an emulator in tests). */
export const GOOGLE_ADMIN_API = 'https://admin.googleapis.com';
const DEFAULT_TOKEN_URI = 'https://oauth2.googleapis.com/token';
const SCOPES = ['https://www.googleapis.com/auth/admin.directory.group.readonly', 'https://www.googleapis.com/auth/admin.directory.user.readonly'];

export interface GsuiteConfig {
  clientEmail: string;
  privateKeyPem: string;
  privateKeyId: string;
  tokenUri: string;
  admin: string;
  fetchGroups: boolean;
  fetchUserInfo: boolean;
  recurseMaxDepth: number;
  userCustomSchemas: string;
}

/** Validates a gsuite provider_config (Vault's Initialize); throws with the reason. */
export function parseGsuiteConfig(pc: Record<string, unknown>): GsuiteConfig {
  const serviceAccount = option(pc, 'gsuite_service_account', 'string', '');
  const admin = option(pc, 'gsuite_admin_impersonate', 'string', '');
  const fetchGroups = option(pc, 'fetch_groups', 'boolean', false);
  const fetchUserInfo = option(pc, 'fetch_user_info', 'boolean', false);
  const recurseMaxDepth = option(pc, 'groups_recurse_max_depth', 'int', 0);
  const userCustomSchemas = option(pc, 'user_custom_schemas', 'string', '');
  if (serviceAccount === '') throw new Error("'gsuite_service_account' must be the contents of a JSON service account key file");
  if (admin === '') throw new Error("'gsuite_admin_impersonate' must be set to an email address of a G Suite user with 'Read' permission to access the G Suite Admin User and Group APIs");
  if (recurseMaxDepth < 0) throw new Error("'gsuite_recurse_max_depth' must be a positive integer");
  let key: Record<string, unknown>;
  try {
    key = JSON.parse(serviceAccount) as Record<string, unknown>;
    if (typeof key !== 'object' || key === null || Array.isArray(key)) throw new Error('not a JSON object');
  } catch (e) {
    throw new Error(`error parsing service account JSON: ${e instanceof Error ? e.message : String(e)} (a key file path cannot be read here: give its contents)`);
  }
  if (key.type !== 'service_account') throw new Error(`error parsing service account JSON: 'type' field is ${JSON.stringify(key.type ?? '')} (expected "service_account")`);
  if (typeof key.client_email !== 'string' || key.client_email === '') throw new Error("error parsing service account JSON: 'client_email' is missing");
  if (typeof key.private_key !== 'string' || !key.private_key.includes('PRIVATE KEY')) throw new Error("error parsing service account JSON: 'private_key' is missing");
  return {
    clientEmail: key.client_email,
    privateKeyPem: key.private_key,
    privateKeyId: typeof key.private_key_id === 'string' ? key.private_key_id : '',
    tokenUri: typeof key.token_uri === 'string' && key.token_uri !== '' ? key.token_uri : DEFAULT_TOKEN_URI,
    admin,
    fetchGroups,
    fetchUserInfo,
    recurseMaxDepth,
    userCustomSchemas,
  };
}

/** Checks what parsing cannot: that the private key is an RSA key jose can sign with. */
export async function checkGsuiteKey(c: GsuiteConfig): Promise<void> {
  try {
    await importPKCS8(c.privateKeyPem, 'RS256');
  } catch (e) {
    throw new Error(`error parsing service account JSON: private key: ${e instanceof Error ? e.message : String(e)}`);
  }
}

interface CachedToken {
  token: string;
  expiresAt: number;
}

/** Access tokens by service account, admin and token URI; a login reuses one until a minute before it expires. */
const tokens = new Map<string, CachedToken>();
const signingKeys = new Map<string, Promise<CryptoKey>>();

const tokenKey = (c: GsuiteConfig): string => `${c.clientEmail}\n${c.admin}\n${c.tokenUri}\n${c.privateKeyId}`;

async function accessToken(c: GsuiteConfig): Promise<string> {
  const cacheKey = tokenKey(c);
  const cached = tokens.get(cacheKey);
  if (cached && cached.expiresAt - 60_000 > Date.now()) return cached.token;
  let key = signingKeys.get(c.privateKeyPem);
  if (!key) signingKeys.set(c.privateKeyPem, (key = importPKCS8(c.privateKeyPem, 'RS256')));
  const now = Math.floor(Date.now() / 1000);
  const assertion = await new SignJWT({ scope: SCOPES.join(' ') })
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...(c.privateKeyId ? { kid: c.privateKeyId } : {}) })
    .setIssuer(c.clientEmail)
    .setSubject(c.admin)
    .setAudience(c.tokenUri)
    .setIssuedAt(now)
    .setExpirationTime(now + 3600)
    .sign(await key);
  const res = await fetch(c.tokenUri, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }).toString(),
  });
  const body = (await res.json().catch(() => ({}))) as { access_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown };
  if (res.status !== 200 || typeof body.access_token !== 'string') {
    throw new Error(`oauth2: cannot fetch token: ${res.status}: ${JSON.stringify(body)}`);
  }
  const expiresIn = typeof body.expires_in === 'number' ? body.expires_in : 3600;
  tokens.set(cacheKey, { token: body.access_token, expiresAt: Date.now() + expiresIn * 1000 });
  return body.access_token;
}

async function directoryGet(c: GsuiteConfig, apiBase: string, path: string, query: Record<string, string>): Promise<Record<string, unknown>> {
  const url = new URL(`${apiBase.replace(/\/$/, '')}/admin/directory/v1/${path}`);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  const get = async () => fetch(url.toString(), { headers: { authorization: `Bearer ${await accessToken(c)}`, accept: 'application/json' } });
  let res = await get();
  if (res.status === 401) {
    // A kept token the API no longer takes (revoked, or its grant changed): get a new one, once.
    await res.body?.cancel();
    tokens.delete(tokenKey(c));
    res = await get();
  }
  const text = await res.text();
  if (res.status !== 200) throw new Error(`googleapi: Error ${res.status}: ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** Every group `user` belongs to (by email), and, to recurseMaxDepth levels, the groups those belong to. */
export async function workspaceGroups(c: GsuiteConfig, apiBase: string, user: string): Promise<string[]> {
  const seen = new Set<string>();
  const search = async (key: string, depth: number): Promise<void> => {
    let pageToken = '';
    do {
      const page = await directoryGet(c, apiBase, 'groups', { userKey: key, fields: 'nextPageToken,groups(email)', ...(pageToken ? { pageToken } : {}) });
      const fresh: string[] = [];
      for (const g of (page.groups as { email?: unknown }[] | undefined) ?? []) {
        if (typeof g.email !== 'string' || seen.has(g.email)) continue;
        seen.add(g.email);
        fresh.push(g.email);
      }
      // Only groups not seen before are searched, so a cycle of groups ends.
      if (depth > 0) for (const email of fresh) await search(email, depth - 1);
      pageToken = typeof page.nextPageToken === 'string' ? page.nextPageToken : '';
    } while (pageToken !== '');
  };
  await search(user, c.recurseMaxDepth);
  return [...seen];
}

/** The user's values of the configured custom schemas, by schema name (they become claims). */
export async function workspaceCustomSchemas(c: GsuiteConfig, apiBase: string, user: string): Promise<Record<string, unknown>> {
  const body = await directoryGet(c, apiBase, `users/${encodeURIComponent(user)}`, { projection: 'custom', customFieldMask: c.userCustomSchemas, fields: 'customSchemas' });
  const schemas = body.customSchemas;
  return typeof schemas === 'object' && schemas !== null ? (schemas as Record<string, unknown>) : {};
}
