// An Okta emulator for the okta provider: GET /api/v1/users/{id or login}/groups as Okta answers it
// (Group objects, paged with a Link rel="next" header and an `after` cursor), for callers with a
// valid API token (Authorization: SSWS <token>). Runs in Node as a vitest global setup.
//
// Tests script it with PUT /org: { apiTokens: [...], users: { <id>: { login, groups: [names] } },
// pageSize?, loopLink? } and read GET /stats.
import type { TestProject } from 'vitest/node';
import { serveJson } from './json-server';

declare module 'vitest' {
  export interface ProvidedContext {
    oktaPort: number;
  }
}

export interface Org {
  apiTokens: string[];
  users: Record<string, { login: string; groups: string[] }>;
  /** Groups per page (default 2). */
  pageSize?: number;
  /** Make every page's next link point back at the first page. */
  loopLink?: boolean;
}

const oktaError = (status: number, code: string, summary: string) => ({ errorCode: code, errorSummary: summary, errorLink: code, errorId: `oae${status}`, errorCauses: [] });

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let org: Org = { apiTokens: [], users: {} };
  let calls = 0;

  const server = await serveJson(({ req, raw, url, base, json }) => {
    if (req.method === 'PUT' && url.pathname === '/org') {
      org = JSON.parse(raw) as Org;
      calls = 0;
      return json(200, {});
    }
    if (req.method === 'GET' && url.pathname === '/stats') return json(200, { calls });
    const m = /^\/api\/v1\/users\/([^/]+)\/groups$/.exec(url.pathname);
    if (req.method !== 'GET' || !m) return json(404, oktaError(404, 'E0000022', 'The endpoint does not support the provided HTTP method'));
    const auth = /^SSWS (.+)$/.exec(req.headers.authorization ?? '');
    if (!auth || !org.apiTokens.includes(auth[1])) return json(401, oktaError(401, 'E0000011', 'Invalid token provided'));
    calls++;
    const key = decodeURIComponent(m[1]);
    const [id, user] = Object.entries(org.users).find(([uid, u]) => uid === key || u.login === key) ?? [];
    if (!id || !user) return json(404, oktaError(404, 'E0000007', `Not found: Resource not found: ${key} (User)`));
    const size = org.pageSize ?? 2;
    const after = Number(url.searchParams.get('after') ?? '0');
    const page = user.groups.slice(after, after + size).map((name, i) => ({ id: `00g${after + i}`, type: 'OKTA_GROUP', profile: { name, description: null } }));
    const headers: Record<string, string> = {};
    const self = `${base}${url.pathname}`;
    if (org.loopLink) headers.link = `<${self}>; rel="self", <${self}?after=0>; rel="next"`;
    else if (after + size < user.groups.length) headers.link = `<${self}>; rel="self", <${self}?after=${after + size}&limit=${size}>; rel="next"`;
    return json(200, page, headers);
  });
  project.provide('oktaPort', server.port);
  return server.close;
}
