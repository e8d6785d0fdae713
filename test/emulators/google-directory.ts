// A Google emulator for the gsuite provider: the OAuth 2.0 token endpoint's JWT-bearer grant
// (the service account's signed assertion is verified with its public key, its audience, issuer,
// subject and scopes checked) and the Admin SDK Directory API reads the provider makes
// (groups.list by userKey, paged; users.get with the custom projection). Only access tokens it
// issued, with the right scope, are accepted. Runs in Node as a vitest global setup.
//
// Tests script it with PUT /directory (Directory below) and read GET /stats.
import { randomBytes } from 'node:crypto';
import { decodeJwt, importSPKI, jwtVerify } from 'jose';
import type { TestProject } from 'vitest/node';
import { serveJson } from './json-server';

declare module 'vitest' {
  export interface ProvidedContext {
    googlePort: number;
  }
}

export const GROUP_SCOPE = 'https://www.googleapis.com/auth/admin.directory.group.readonly';
export const USER_SCOPE = 'https://www.googleapis.com/auth/admin.directory.user.readonly';

export interface Directory {
  /** Service accounts by client_email: their public keys (SPKI PEM). */
  serviceAccounts: Record<string, string>;
  /** Users domain-wide delegation lets the service accounts act as. */
  admins: string[];
  /** The groups (emails) each user or group is a direct member of. */
  memberships: Record<string, string[]>;
  /** Users' custom schema values: user → schema → field → value. */
  customSchemas?: Record<string, Record<string, Record<string, unknown>>>;
}

export interface Stats {
  tokenRequests: number;
  groupLists: number;
  userGets: number;
}

const apiError = (code: number, message: string, status: string) => ({ error: { code, message, errors: [{ message, domain: 'global', reason: status.toLowerCase() }], status } });

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let directory: Directory = { serviceAccounts: {}, admins: [], memberships: {} };
  let stats: Stats = { tokenRequests: 0, groupLists: 0, userGets: 0 };
  const issued = new Map<string, { sub: string; scopes: string[] }>();
  const PAGE = 2;

  const server = await serveJson(
    async ({ req, raw, url, base, json }) => {
      const route = `${req.method} ${url.pathname}`;
      if (route === 'PUT /directory') {
        directory = JSON.parse(raw) as Directory;
        stats = { tokenRequests: 0, groupLists: 0, userGets: 0 };
        issued.clear();
        return json(200, {});
      }
      if (route === 'GET /stats') return json(200, stats);

      if (route === 'POST /token') {
        stats.tokenRequests++;
        const form = new URLSearchParams(raw);
        if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return json(400, { error: 'unsupported_grant_type', error_description: 'Invalid grant_type.' });
        const assertion = form.get('assertion') ?? '';
        let iss = '';
        try {
          iss = String(decodeJwt(assertion).iss ?? '');
        } catch {
          return json(400, { error: 'invalid_grant', error_description: 'Invalid JWT.' });
        }
        const pem = directory.serviceAccounts[iss];
        if (!pem) return json(401, { error: 'invalid_client', error_description: 'The OAuth client was not found.' });
        let payload;
        try {
          ({ payload } = await jwtVerify(assertion, await importSPKI(pem, 'RS256'), { issuer: iss, audience: `${base}/token`, algorithms: ['RS256'], maxTokenAge: '1h' }));
        } catch (e) {
          return json(400, { error: 'invalid_grant', error_description: `Invalid JWT Signature. (${e instanceof Error ? e.message : String(e)})` });
        }
        const sub = String(payload.sub ?? '');
        const scopes = String(payload.scope ?? '').split(' ').filter(Boolean);
        if (!directory.admins.includes(sub) || scopes.some((s) => s !== GROUP_SCOPE && s !== USER_SCOPE)) {
          return json(401, { error: 'unauthorized_client', error_description: 'Client is unauthorized to retrieve access tokens using this method, or client not authorized for any of the scopes requested.' });
        }
        const token = `ya29.${randomBytes(24).toString('base64url')}`;
        issued.set(token, { sub, scopes });
        return json(200, { access_token: token, expires_in: 3599, token_type: 'Bearer' });
      }

      const caller = issued.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
      const needs = (scope: string) => (caller?.scopes.includes(scope) ? null : json(401, apiError(401, 'Request had invalid authentication credentials.', 'UNAUTHENTICATED')));
      if (route === 'GET /admin/directory/v1/groups') {
        if (needs(GROUP_SCOPE)) return;
        stats.groupLists++;
        const userKey = url.searchParams.get('userKey');
        if (!userKey) return json(400, apiError(400, 'Bad Request', 'INVALID_ARGUMENT'));
        const all = directory.memberships[userKey] ?? [];
        const from = Number(url.searchParams.get('pageToken') ?? '0');
        const page = all.slice(from, from + PAGE);
        const body: Record<string, unknown> = { kind: 'admin#directory#groups', etag: '"e"' };
        if (page.length > 0) body.groups = page.map((email) => ({ email }));
        if (from + PAGE < all.length) body.nextPageToken = String(from + PAGE);
        return json(200, body);
      }
      const user = /^GET \/admin\/directory\/v1\/users\/([^/]+)$/.exec(route);
      if (user) {
        if (needs(USER_SCOPE)) return;
        stats.userGets++;
        const key = decodeURIComponent(user[1]);
        const mask = url.searchParams.get('customFieldMask');
        if (mask && url.searchParams.get('projection') !== 'custom') return json(400, apiError(400, 'Invalid Input: custom field mask without custom projection', 'INVALID_ARGUMENT'));
        const schemas = directory.customSchemas?.[key];
        if (!schemas) return json(404, apiError(404, 'Resource Not Found: userKey', 'NOT_FOUND'));
        const wanted = (mask ?? '').split(',').filter(Boolean);
        return json(200, { customSchemas: Object.fromEntries(Object.entries(schemas).filter(([name]) => wanted.includes(name))) });
      }
      return json(404, apiError(404, `no route ${route}`, 'NOT_FOUND'));
    },
    { contentType: 'application/json; charset=UTF-8', errorBody: (e) => apiError(500, String(e), 'INTERNAL') },
  );
  project.provide('googlePort', server.port);
  return server.close;
}
