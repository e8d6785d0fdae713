// sys/tools/random and sys/tools/hash: the same tools transit mounts serve, at Vault's sys paths,
// behind the ACL like any other sys path.
import { beforeAll, describe, expect, it } from 'vitest';
import { api, caller, initCluster, PERMISSION_DENIED, type Cluster } from '../../helpers/api';

let c: Cluster;
const { call, ok } = caller(() => c.root);

beforeAll(async () => {
  c = await initCluster();
});

describe('sys/tools', () => {
  it('returns random bytes, in the path or the body, base64 or hex', async () => {
    expect(atob((await ok('POST', 'sys/tools/random')).body.data.random_bytes).length).toBe(32);
    expect(atob((await ok('POST', 'sys/tools/random/48')).body.data.random_bytes).length).toBe(48);
    expect((await ok('POST', 'sys/tools/random/platform/8', { format: 'hex' })).body.data.random_bytes).toMatch(/^[0-9a-f]{16}$/);
    const bad = await call('POST', 'sys/tools/random', { bytes: 0 });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual(['bytes must be positive']);
  });

  it('hashes with the algorithm from the path or the body', async () => {
    const input = btoa('abc');
    expect((await ok('POST', 'sys/tools/hash', { input })).body.data.sum).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect((await ok('POST', 'sys/tools/hash/sha2-512', { input, format: 'base64' })).body.data.sum).toBe(
      '3a81oZNherrMQXNJriBBMRLm+k6JqX6iCp7u5ktV05ohkpkqJ0/BqDa6PCOj/uu9RU1EI2Q86A4qmslPpUyknw==',
    );
    const bad = await call('POST', 'sys/tools/hash/md5', { input });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual(['unsupported algorithm md5']);
  });

  it('needs a policy that allows it', async () => {
    const token = (await ok('POST', 'auth/token/create', { policies: ['default'] })).body.auth.client_token;
    const r = await api('POST', 'sys/tools/random', { token });
    expect(r.status).toBe(403);
    expect(r.body.errors).toEqual([PERMISSION_DENIED]);
  });
});
