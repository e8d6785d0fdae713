// Names every JavaScript object inherits ("constructor", "__proto__", "toString") sent where a
// request names a type, an algorithm, an operation or a path segment. A table looked up with `in`
// or `[]` finds them, which made 500s (a transit key's type, an upserting encrypt's, a managed-key
// type) and accepted a role's token_type of "constructor". Every such request must answer a 4xx (or
// succeed, where the name is just a name), never a server error.
import { beforeAll, describe, expect, it } from 'vitest';
import { caller, initCluster, type Cluster } from '../../helpers/api';

let c: Cluster;
const { call, ok } = caller(() => c.root);

const NAMES = ['constructor', '__proto__', 'toString'];

/** The requests for one name: [method, path, body]. */
function requests(n: string): [string, string, unknown?][] {
  const id = n.replace(/_/g, 'u');
  return [
    // transit
    ['POST', `transit/keys/k-${id}`, { type: n }],
    ['POST', `transit/encrypt/e-${id}`, { plaintext: 'aGk=', type: n }],
    ['POST', 'transit/sign/ed', { input: 'aGk=', hash_algorithm: n, marshaling_algorithm: n }],
    ['POST', 'transit/sign/rsa', { input: 'aGk=', hash_algorithm: n, signature_algorithm: n }],
    ['POST', `transit/sign/rsa/${n}`, { input: 'aGk=' }],
    ['POST', `transit/hmac/aes/${n}`, { input: 'aGk=' }],
    ['POST', 'transit/hmac/aes', { input: 'aGk=', algorithm: n }],
    ['POST', `transit/hash/${n}`, { input: 'aGk=' }],
    ['POST', 'transit/hash', { input: 'aGk=', algorithm: n, format: n }],
    ['POST', `transit/random/${n}`, {}],
    ['POST', 'transit/random', { source: n, format: n }],
    ['POST', `transit/datakey/${n}/aes`, {}],
    ['GET', `transit/export/${n}/aes`],
    ['POST', `transit/${n}/aes`, { plaintext: 'aGk=' }],
    ['GET', `transit/${n}`],
    // pki
    ['POST', `pki/roles/r-${id}`, { key_type: n }],
    ['POST', 'pki/issue/r', { common_name: 'a.example', format: n, private_key_format: n }],
    ['POST', `pki/root/generate/${n}`, { common_name: 'x' }],
    ['POST', `pki/intermediate/generate/${n}`, { common_name: 'x' }],
    ['POST', 'pki/keys/generate/internal', { key_type: n }],
    ['POST', `pki/${n}`, {}],
    ['GET', `pki/${n}/x`],
    // kv
    ['POST', `kv/data/${n}`, { data: { [n]: 1 }, options: { [n]: 1 } }],
    ['POST', `kv/${n}/x`, { data: {} }],
    ['POST', `kv1/${n}`, { [n]: 1 }],
    ['GET', `kv1/${n}`],
    // auth
    ['POST', 'auth/jwt/config', { jwt_validation_pubkeys: ['x'], jwt_supported_algs: [n], provider_config: { provider: n } }],
    ['POST', `auth/jwt/role/r-${id}`, { role_type: n, user_claim: 'sub', bound_audiences: ['a'], token_type: n }],
    ['POST', 'auth/jwt/login', { role: n, jwt: 'x' }],
    ['POST', `auth/token/roles/r-${id}`, { token_type: n }],
    ['POST', 'auth/token/create', { type: n, policies: [n], meta: { [n]: 'x' } }],
    ['POST', `auth/token/${n}`, {}],
    // sys
    ['POST', `sys/mounts/m-${id}`, { type: n }],
    ['POST', `sys/mounts/kv-${id}`, { type: 'kv', options: { version: n } }],
    ['POST', 'sys/mounts/transit/tune', { [n]: 1, options: { [n]: 'x' } }],
    ['POST', `sys/auth/a-${id}`, { type: n }],
    ['POST', `sys/audit/d-${id}`, { type: n }],
    ['POST', `sys/audit/f-${id}`, { type: 'file', options: { file_path: 'discard', [n]: 'x' } }],
    ['POST', `sys/policies/acl/p-${id}`, { policy: `path "kv/{{identity.entity.${n}}}" { capabilities = ["${n}"] }` }],
    ['POST', `sys/policies/rgp/r-${id}`, { enforcement_level: n, policy: `main = rule { ${n} }` }],
    ['POST', `sys/policies/egp/e-${id}`, { enforcement_level: 'advisory', paths: ['*'], policy: `import "${n}"\nmain = rule { true }` }],
    ['POST', `sys/policies/egp/f-${id}`, { enforcement_level: 'advisory', paths: ['*'], policy: `main = rule { ${n}() }` }],
    ['POST', `sys/policies/egp/g-${id}`, { enforcement_level: 'advisory', paths: ['*'], policy: `main = rule { request.${n} is "x" }` }],
    ['POST', `sys/managed-keys/${n}/k`, {}],
    ['GET', `sys/managed-keys/${n}/k`],
    ['POST', `sys/managed-keys/pkcs11/k-${id}`, { library: n, key_label: 'x', pin: '1', mechanism: n }],
    ['POST', `sys/plugins/catalog/${n}/p`, { sha256: 'ab', command: 'x' }],
    ['POST', `sys/tools/hash/${n}`, { input: 'aGk=' }],
    ['POST', `sys/tools/random/${n}`, {}],
    ['GET', `sys/metrics?format=${n}`],
    ['GET', `sys/health?standbycode=${n}`],
    ['GET', `sys/internal/counters/${n}`],
    ['POST', 'sys/capabilities-self', { paths: [n] }],
    ['POST', `sys/wrapping/${n}`, {}],
    ['POST', `sys/leases/${n}`, {}],
    ['POST', 'sys/wrapping/wrap', { [n]: 1 }],
    ['GET', `sys/${n}`],
    // identity
    ['POST', 'identity/entity', { name: `e-${id}`, metadata: { [n]: 'x' }, policies: [`{{identity.entity.${n}}}`] }],
    ['POST', 'identity/lookup/entity', { [n]: 'x' }],
  ];
}

beforeAll(async () => {
  c = await initCluster();
  for (const [path, body] of [
    ['sys/mounts/transit', { type: 'transit' }],
    ['sys/mounts/pki', { type: 'pki' }],
    ['sys/mounts/kv', { type: 'kv', options: { version: '2' } }],
    ['sys/mounts/kv1', { type: 'kv', options: { version: '1' } }],
    ['sys/auth/jwt', { type: 'jwt' }],
    ['transit/keys/aes', {}],
    ['transit/keys/ed', { type: 'ed25519' }],
    ['transit/keys/rsa', { type: 'rsa-2048' }],
    ['pki/root/generate/internal', { common_name: 'x', key_type: 'ec' }],
    ['pki/roles/r', { allow_any_name: true, key_type: 'ec' }],
  ] as const) {
    await ok('POST', path, body);
  }
});

describe('names every object inherits', () => {
  it.each(NAMES)('%s: no request answers a server error', async (n) => {
    const failures: string[] = [];
    for (const [method, path, body] of requests(n)) {
      const r = await call(method, path, body);
      if (r.status >= 500) failures.push(`${r.status} ${method} ${path}: ${r.text.slice(0, 160)}`);
    }
    expect(failures).toEqual([]);
  });
});
