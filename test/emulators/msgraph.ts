// A Microsoft Graph emulator for the Azure provider's group lookup: POST /v1.0/me/getMemberObjects
// as Graph answers it. "me" is whoever the bearer token belongs to, and the token is checked the
// way a resource server would: by asking the provider that issued it (the OIDC stub's userinfo
// endpoint), so only an access token from a real code exchange gets an answer. Runs in Node as a
// vitest global setup (a server inside workerd is unreachable).
//
// Tests script the directory with PUT /tenants/<name>: { userinfo, members: { <sub>: [ids] },
// failure?: { status, body } }, where <name> is the stub provider whose tokens ("at-<name>") the
// tenant accepts; GET /tenants/<name>/calls says how many lookups it answered.
import type { TestProject } from 'vitest/node';
import { serveJson } from './json-server';

declare module 'vitest' {
  export interface ProvidedContext {
    msgraphPort: number;
  }
}

export interface Tenant {
  /** The issuing provider's userinfo endpoint, which tells whose a token is. */
  userinfo: string;
  /** Group object ids by user (the userinfo `sub`). */
  members: Record<string, string[]>;
  /** Answer every lookup with this instead. */
  failure?: { status: number; body: unknown };
}

const graphError = (code: string, message: string) => ({ error: { code, message, innerError: { date: new Date().toISOString() } } });

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const tenants = new Map<string, Tenant & { calls: number }>();

  const server = await serveJson(
    async ({ req, raw, url, json }) => {
      const path = url.pathname;
      const scripted = /^\/tenants\/([^/]+)(\/calls)?$/.exec(path);
      if (scripted && req.method === 'PUT' && !scripted[2]) {
        tenants.set(scripted[1], { ...(JSON.parse(raw) as Tenant), calls: 0 });
        return json(200, {});
      }
      if (scripted && req.method === 'GET' && scripted[2]) return json(200, { calls: tenants.get(scripted[1])?.calls ?? 0 });
      if (req.method !== 'POST' || path !== '/v1.0/me/getMemberObjects') return json(404, graphError('Request_ResourceNotFound', `no route ${req.method} ${path}`));

      const token = /^Bearer (at-(.+))$/.exec(req.headers.authorization ?? '');
      const tenant = token ? tenants.get(token[2]) : undefined;
      if (!token || !tenant) return json(401, graphError('InvalidAuthenticationToken', 'Access token validation failure.'));
      const who = await fetch(tenant.userinfo, { headers: { authorization: `Bearer ${token[1]}` } });
      if (who.status !== 200) return json(401, graphError('InvalidAuthenticationToken', 'Access token validation failure. Invalid audience.'));
      const { sub } = (await who.json()) as { sub?: string };

      let body: { securityEnabledOnly?: unknown };
      try {
        body = JSON.parse(raw) as { securityEnabledOnly?: unknown };
      } catch {
        return json(400, graphError('BadRequest', 'Unable to read JSON request payload.'));
      }
      if (typeof body.securityEnabledOnly !== 'boolean') return json(400, graphError('Request_BadRequest', "The parameter 'securityEnabledOnly' is required."));
      tenant.calls++;
      if (tenant.failure) return json(tenant.failure.status, tenant.failure.body);
      return json(200, { '@odata.context': 'https://graph.microsoft.com/v1.0/$metadata#Collection(Edm.String)', value: tenant.members[sub ?? ''] ?? [] });
    },
    { errorBody: (e) => graphError('InternalServerError', String(e)) },
  );
  project.provide('msgraphPort', server.port);
  return server.close;
}
