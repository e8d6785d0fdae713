// A JWT login whose groups come from Google Workspace, end to end: node-vault against the real
// launcher, which is pointed at the Google emulator (test/emulators/google-directory.ts) through
// GOOGLE_ADMIN_API_URL, as an operator would point it at a private endpoint. Checks that the
// variable reaches the auth mount's object and that the entity lands in the external group.
import nodeVault from 'node-vault';
import { exportPKCS8, exportSPKI, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestProject } from 'vitest/node';
import startGoogle from '../emulators/google-directory';
import { startLauncher, tempDir, type Server } from './processes';

const ROOT_TOKEN = 'hvs.e2eRootTokenForProviderTests0';
const ADMIN = 'admin@example.com';

describe('gsuite provider through the launcher', () => {
  let server: Server;
  let stopGoogle: () => Promise<void>;
  let google = '';

  beforeAll(async () => {
    stopGoogle = await startGoogle({ provide: (_key: string, port: number) => (google = `http://127.0.0.1:${port}`) } as unknown as TestProject);
    server = await startLauncher(tempDir('coffer-e2e-providers-'), { COFFER_DEV_ROOT_TOKEN: ROOT_TOKEN, GOOGLE_ADMIN_API_URL: google });
  });

  afterAll(async () => {
    await server?.stop();
    await stopGoogle?.();
  });

  it('logs in with the Workspace groups as external group aliases', async () => {
    const sa = await generateKeyPair('RS256', { extractable: true });
    const email = 'coffer@project.iam.gserviceaccount.com';
    const put = await fetch(`${google}/directory`, {
      method: 'PUT',
      body: JSON.stringify({ serviceAccounts: { [email]: await exportSPKI(sa.publicKey) }, admins: [ADMIN], memberships: { 'alice@example.com': ['eng@example.com'], 'eng@example.com': ['all@example.com'] } }),
    });
    expect(put.status).toBe(200);

    const root = nodeVault({ endpoint: server.url, token: ROOT_TOKEN, noCustomHTTPVerbs: true });
    const signer = await generateKeyPair('ES256', { extractable: true });
    await root.enableAuth({ mount_point: 'jwt', type: 'jwt' });
    const serviceAccount = JSON.stringify({ type: 'service_account', private_key_id: 'k1', private_key: await exportPKCS8(sa.privateKey), client_email: email, token_uri: `${google}/token` });
    await root.write('auth/jwt/config', {
      jwt_validation_pubkeys: [await exportSPKI(signer.publicKey)],
      provider_config: { provider: 'gsuite', gsuite_service_account: serviceAccount, gsuite_admin_impersonate: ADMIN, fetch_groups: true, groups_recurse_max_depth: 1 },
    });
    await root.write('auth/jwt/role/staff', { role_type: 'jwt', user_claim: 'email', groups_claim: 'groups', bound_audiences: 'coffer', token_policies: 'default' });
    const group = await root.write('identity/group', { name: 'engineering', type: 'external', policies: ['eng-policy'] });
    const accessor = (await root.read('sys/auth')).data['jwt/'].accessor as string;
    await root.write('identity/group-alias', { name: 'eng@example.com', mount_accessor: accessor, canonical_id: group.data.id });

    const jwt = await new SignJWT({ email: 'alice@example.com' }).setProtectedHeader({ alg: 'ES256' }).setSubject('alice').setAudience('coffer').setIssuedAt().setExpirationTime('5m').sign(signer.privateKey);
    const login = await nodeVault({ endpoint: server.url, noCustomHTTPVerbs: true }).write('auth/jwt/login', { role: 'staff', jwt });
    expect(login.auth.identity_policies).toEqual(['eng-policy']);
    const entity = await root.read(`identity/entity/id/${login.auth.entity_id}`);
    expect(entity.data.group_ids).toEqual([group.data.id]);
    // The service account key never comes back.
    expect((await root.read('auth/jwt/config')).data.provider_config.gsuite_service_account).toBeUndefined();
  });
});
