// A bounded, deterministic fuzz run over every path family (issue 16): malformed and extreme
// bodies, odd names, query strings and headers. It fails on any 5xx, any request that stalls, any
// 4xx without Vault's error body, and any value that reads back different from what was written
// (or a refused write that left something behind).
//
// FUZZ_SEED and FUZZ_CASES (environment variables of the test run) choose another run; a failure
// names its seed and case, and running with that seed repeats it. FUZZ_ONLY (a regular expression
// over family names) narrows a run; FUZZ_TRACE=1 prints every case as it starts and every failure.
import { env, SELF } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { initCluster } from '../../helpers/api';
import { FAMILIES, QUERIES, READ_PATHS, type FuzzContext, type Reply } from '../../helpers/fuzz/families';
import { caseRng, type Rng } from '../../helpers/fuzz/random';
import { EXTREMES, mutateBody, ODD_NAMES, objectText } from '../../helpers/fuzz/values';

const SEED = Number(env.FUZZ_SEED || 20261125);
const CASES = Number(env.FUZZ_CASES || 3000);
const CONCURRENCY = 8;
/** A request taking longer than this has stalled (the slowest legitimate one here takes a few hundred ms). */
const STALL_MS = 10_000;

let root = '';

interface Request {
  method: string;
  path: string;
  body?: string | Uint8Array;
  contentType?: string;
  headers?: Record<string, string>;
  token?: string;
}

async function send(r: Request): Promise<Reply> {
  const headers: Record<string, string> = { 'X-Vault-Token': r.token ?? root, ...r.headers };
  if (r.body !== undefined && r.contentType !== '') headers['Content-Type'] = r.contentType ?? 'application/json';
  const res = await SELF.fetch(`http://coffer.test/v1/${r.path}`, { method: r.method, headers, body: r.body });
  return { status: res.status, text: await res.text() };
}

const ctx: FuzzContext = {
  send: (method, path, body, token) => send({ method, path, body, token }),
};

async function must(method: string, path: string, body?: unknown): Promise<Reply> {
  const r = await send({ method, path, body: body === undefined ? undefined : JSON.stringify(body) });
  if (r.status >= 300) throw new Error(`setup ${method} ${path}: ${r.status} ${r.text}`);
  return r;
}

beforeAll(async () => {
  root = (await initCluster()).root;
  await must('POST', 'sys/mounts/fuzz-kv1', { type: 'kv' });
  await must('POST', 'sys/mounts/fuzz-kv2', { type: 'kv', options: { version: '2' } });
  await must('POST', 'sys/mounts/fuzz-kv2-config', { type: 'kv', options: { version: '2' } });
  await must('POST', 'sys/mounts/fuzz-tune', { type: 'kv' });
  await must('POST', 'fuzz-kv2/data/patched', { data: { user: 'alice' } });
  await must('POST', 'fuzz-kv2/metadata/patched', { custom_metadata: { owner: 'a' } });

  await must('POST', 'sys/mounts/fuzz-transit', { type: 'transit' });
  await must('POST', 'fuzz-transit/keys/aes', { type: 'aes256-gcm96' });
  await must('POST', 'fuzz-transit/keys/configured', { type: 'aes256-gcm96' });
  await must('POST', 'fuzz-transit/keys/ec', { type: 'ecdsa-p256' });
  await must('GET', 'fuzz-transit/wrapping_key');

  await must('POST', 'sys/mounts/fuzz-pki', { type: 'pki', config: { max_lease_ttl: '87600h' } });
  await must('POST', 'fuzz-pki/root/generate/internal', { common_name: 'Fuzz CA', key_type: 'ec', ttl: '8760h' });
  await must('POST', 'fuzz-pki/roles/web', { allow_any_name: true, key_type: 'ec', max_ttl: '1h' });

  const pair = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify'])) as CryptoKeyPair;
  const spki = btoa(String.fromCharCode(...new Uint8Array((await crypto.subtle.exportKey('spki', pair.publicKey)) as ArrayBuffer)));
  await must('POST', 'sys/auth/fuzz-jwt', { type: 'jwt' });
  await must('POST', 'auth/fuzz-jwt/config', { jwt_validation_pubkeys: [`-----BEGIN PUBLIC KEY-----\n${spki}\n-----END PUBLIC KEY-----`] });
  await must('POST', 'auth/fuzz-jwt/role/login', { role_type: 'jwt', user_claim: 'sub', bound_audiences: ['coffer'] });
});

/** Headers a case may add: wrapping TTLs and request flags, valid and not. */
const ODD_HEADERS: readonly Record<string, string>[] = [
  { 'X-Vault-Wrap-TTL': 'abc' },
  { 'X-Vault-Wrap-TTL': '-1' },
  { 'X-Vault-Wrap-TTL': '1e999' },
  { 'X-Vault-Wrap-TTL': '99999999999h' },
  { 'X-Vault-Wrap-TTL': '5m' },
  { 'X-Vault-Request': 'true' },
  { 'X-Vault-Policy-Override': 'maybe' },
  { 'X-Vault-Token': '' },
  { 'X-Vault-Token': 'hvs.forged' },
  { Authorization: 'Bearer ' },
];

interface Case {
  request: Request;
  /** Runs the family's read-back check after the request, if the case has one. */
  check?: (reply: Reply) => Promise<string | null>;
}

function buildCase(rng: Rng, index: number): Case {
  if (rng.chance(0.2)) {
    // A read, list, delete or empty write on an engine's path with an odd name.
    const name = rng.chance(0.5) ? `c${index}` : rng.pick(ODD_NAMES);
    const method = rng.pick(['GET', 'GET', 'DELETE', 'POST', 'PATCH']);
    const path = rng.pick(READ_PATHS)(name) + rng.pick(QUERIES);
    // Deleting through a name that climbs out of its folder could take a shared fixture away.
    if (method === 'DELETE' && name.includes('.')) return { request: { method: 'GET', path } };
    const body = method === 'POST' || method === 'PATCH' ? objectText({ [rng.pick(['a', 'data', 'version'])]: rng.pick(EXTREMES) }) : undefined;
    return { request: { method, path, body, contentType: method === 'PATCH' ? 'application/merge-patch+json' : undefined } };
  }
  const family = rng.pick(env.FUZZ_ONLY ? FAMILIES.filter((f) => new RegExp(env.FUZZ_ONLY).test(f.name)) : FAMILIES);
  const fresh = rng.chance(0.85);
  const name = fresh ? `c${index}` : rng.pick(ODD_NAMES);
  const sent = mutateBody(rng, family.template(name));
  const odd = rng.chance(0.08) ? rng.pick(ODD_HEADERS) : undefined;
  const request: Request = {
    method: family.method,
    path: family.path(name),
    body: sent.body,
    contentType: sent.contentType ?? family.contentType,
    headers: { ...family.headers, ...odd },
  };
  // A wrapped or unauthenticated answer is not what the family's check reads.
  const check = family.check && !odd ? (reply: Reply) => family.check!(ctx, name, sent, reply, fresh) : undefined;
  return { request, check };
}

/**
 * What is wrong with an answer, or null: no 5xx, and a 4xx carries Vault's `errors` list, with a
 * reason except where Vault itself gives none (reference §1: a 404, a 405, a non-boolean `list`).
 */
function badReply(request: Request, reply: Reply): string | null {
  if (reply.status >= 500) return `${reply.status}: ${reply.text.slice(0, 500)}`;
  if (reply.status < 400) return null;
  // Transit batches with failed items answer 400 with every item's result, as Vault's do.
  if (reply.status === 400 && reply.text.includes('"batch_results":[')) return null;
  // KV v2 answers some misses as Vault does: an empty 404, or a whole response envelope (the
  // version's metadata, or a warning about the path).
  if (reply.status === 404 && request.path.startsWith('fuzz-kv2') && (reply.text === '' || reply.text.startsWith('{"request_id"'))) return null;
  let errors: unknown;
  try {
    errors = (JSON.parse(reply.text) as { errors?: unknown }).errors;
  } catch {
    return `${reply.status} without a JSON body: ${reply.text.slice(0, 200)}`;
  }
  if (!Array.isArray(errors) || errors.some((e) => typeof e !== 'string')) return `${reply.status} without an errors list: ${reply.text.slice(0, 200)}`;
  const bareAllowed = reply.status === 404 || reply.status === 405 || (reply.status === 400 && request.method === 'GET' && /[?&]list=/.test(request.path));
  if (errors.length === 0 && !bareAllowed) return `${reply.status} with an empty errors list`;
  return null;
}

const describeRequest = (r: Request): string => {
  const body = typeof r.body === 'string' ? r.body : r.body ? `<${r.body.length} bytes>` : '';
  return `${r.method} /v1/${r.path}${r.headers && Object.keys(r.headers).length > 0 ? ` ${JSON.stringify(r.headers)}` : ''}${r.contentType !== undefined ? ` [${r.contentType}]` : ''} ${body.slice(0, 300)}`;
};

async function runCase(index: number): Promise<string | null> {
  const c = buildCase(caseRng(SEED, index), index);
  if (env.FUZZ_TRACE) console.log(`case ${index}: ${describeRequest(c.request)}`);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stalled = new Promise<'stalled'>((resolve) => (timer = setTimeout(() => resolve('stalled'), STALL_MS)));
  try {
    const outcome = await Promise.race([
      (async () => {
        const reply = await send(c.request);
        return badReply(c.request, reply) ?? (c.check ? await c.check(reply) : null);
      })(),
      stalled,
    ]);
    if (outcome === 'stalled') return `case ${index}: no answer within ${STALL_MS} ms\n  ${describeRequest(c.request)}`;
    return outcome === null ? null : `case ${index}: ${outcome}\n  ${describeRequest(c.request)}`;
  } finally {
    clearTimeout(timer);
  }
}

describe(`fuzz (seed ${SEED}, ${CASES} cases)`, () => {
  it('no 5xx, no stall, Vault-style refusals, and everything written reads back exactly', { timeout: 600_000 }, async () => {
    const failures: string[] = [];
    let next = 0;
    const worker = async () => {
      while (next < CASES) {
        const failure = await runCase(next++);
        if (!failure) continue;
        failures.push(failure);
        if (env.FUZZ_TRACE) console.log(`FAILED ${failure}`);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    // The server is still whole afterwards.
    expect((await send({ method: 'GET', path: 'sys/health' })).status).toBe(200);
    expect(failures.slice(0, 25).join('\n\n'), `${failures.length} of ${CASES} cases failed (FUZZ_SEED=${SEED})`).toBe('');
  });
});
