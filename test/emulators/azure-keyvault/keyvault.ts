// The emulated Key Vault keys API (REST 7.x): get, create, list, sign, verify, encrypt, decrypt,
// for callers whose bearer token the emulated Entra ID issued for the vault's tenant and resource,
// as the vault's access policy allows. A request without a token gets the 401 challenge
// (WWW-Authenticate: Bearer authorization="<authority>/<tenant>", resource="https://<resource>")
// the Azure SDKs start their challenge-based authentication with.
import type { IncomingHttpHeaders } from 'node:http';
import type { TokenIssuer } from './aad';
import { decrypt, encrypt, ENCRYPT_ALGS, HASH_LENGTH, publicJwk, sign, SIGN_ALGS, verify } from './crypto';
import { badParameter, keyDisabled, keyNotFound, keyOperationForbidden, KvError } from './errors';
import type { Directory, KeyVersion, Vault } from './state';
import type { CallRecord, KeyPermission, KeySpec } from './types';

export interface KvRequest {
  method: string;
  /** The path below the vault's base URL (/keys/…). */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: Buffer;
  vault: Vault;
  /** The vault's base URL as the caller addressed it (the key ids returned start with it). */
  vaultBase: string;
  /** The emulated Entra ID's base URL (for the challenge). */
  authority: string;
}

export interface KvAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Close the connection without an answer. */
  drop?: boolean;
}

const API_VERSION_RE = /^(7\.[0-6](-preview(\.\d+)?)?|2025-07-01)$/;
const KEY_NAME_RE = /^[0-9A-Za-z-]{1,127}$/;
const B64URL_RE = /^[A-Za-z0-9_-]*={0,2}$/;
const OPERATIONS = ['sign', 'verify', 'encrypt', 'decrypt'] as const;
type Operation = (typeof OPERATIONS)[number];

export async function handleKeyVault(directory: Directory, issuer: TokenIssuer, r: KvRequest): Promise<KvAnswer> {
  const { vault } = r;
  const record: CallRecord = { api: 'keyvault', op: 'unknown', vault: vault.name, status: 0, api_version: r.query.get('api-version') ?? undefined };
  const answer = (a: KvAnswer): KvAnswer => {
    record.status = a.status;
    vault.tenant.log(record);
    return a;
  };
  try {
    const route = routeOf(r.method, r.path);
    Object.assign(record, { op: route.op, ...(route.key ? { key: route.key } : {}), ...(route.version ? { version: route.version } : {}) });
    const clientId = await authenticate(issuer, r);
    record.client_id = clientId;
    const fault = vault.tenant.faults.take(route.op);
    if (fault) {
      if (fault.drop) return answer({ status: 0, drop: true });
      const status = fault.status!;
      throw new KvError(status, fault.code ?? (status === 429 ? 'Throttled' : 'InternalServerError'), fault.message ?? `Injected by the emulator (${status}).`, undefined, fault.retry_after !== undefined ? { 'Retry-After': String(fault.retry_after) } : {});
    }
    const apiVersion = r.query.get('api-version');
    if (!apiVersion) throw badParameter('The api-version query parameter is required.');
    if (!API_VERSION_RE.test(apiVersion)) throw badParameter(`The specified version (${apiVersion}) is not recognized. Consider using the latest supported version (7.6).`);
    if (!vault.allows(clientId, route.perm)) {
      throw new KvError(
        403,
        'Forbidden',
        `The user, group or application 'appid=${clientId};iss=https://sts.windows.net/${vault.tenant.id}/' does not have keys ${route.perm} permission on key vault '${vault.name};location=eastus'. For help resolving this issue, please see https://go.microsoft.com/fwlink/?linkid=2125287`,
        'AccessDenied',
      );
    }
    const body = route.op === 'get' || route.op === 'list' ? {} : parseBody(r.body);
    const ok = (b: unknown) => answer({ status: 200, body: b });
    switch (route.op) {
      case 'list':
        return ok({ value: [...vault.keys].map(([name, versions]) => ({ kid: `${r.vaultBase}/keys/${name}`, attributes: attributes(versions[versions.length - 1]) })), nextLink: null });
      case 'get': {
        const k = findVersion(vault, route.key!, route.version);
        if (!k.enabled) throw keyDisabled('get');
        return ok(bundle(r, route.key!, k));
      }
      case 'create': {
        const spec = createSpec(body);
        Object.assign(record, { kty: spec.kty, key_size: spec.key_size, crv: spec.crv, key_ops: spec.key_ops });
        return ok(bundle(r, route.key!, await directory.createKey(vault, route.key!, spec)));
      }
      default: {
        const op = route.op as Operation;
        const k = findVersion(vault, route.key!, route.version);
        record.version = k.version;
        if (!k.enabled) throw keyDisabled(op);
        if (!k.keyOps.includes(op)) throw keyOperationForbidden(op);
        const alg = typeof body.alg === 'string' ? body.alg : '';
        record.alg = alg;
        return ok(await cryptoOperation(directory, r, route.key!, k, op, alg, body));
      }
    }
  } catch (e) {
    const err = e instanceof KvError ? e : new KvError(500, 'InternalServerError', `The emulator failed: ${e instanceof Error ? e.message : String(e)}`);
    record.code = err.code;
    return answer({ status: err.status, body: err.document(), headers: err.headers });
  }
}

interface Route {
  op: 'list' | 'get' | 'create' | Operation;
  perm: KeyPermission;
  key?: string;
  version?: string;
}

function routeOf(method: string, path: string): Route {
  const parts = path.split('/').slice(1);
  if (parts[0] !== 'keys') throw new KvError(404, 'NotFound', `The requested resource ${path} was not found.`);
  const [, name, second, third, ...rest] = parts;
  const checkName = () => {
    if (!KEY_NAME_RE.test(name ?? '')) throw badParameter(`The key name ${JSON.stringify(name ?? '')} is not valid: 1 to 127 letters, digits and dashes.`);
  };
  if (method === 'GET' && (name === undefined || name === '') && second === undefined) return { op: 'list', perm: 'list' };
  if (rest.length === 0 && method === 'GET' && third === undefined) {
    checkName();
    return { op: 'get', perm: 'get', key: name, ...(second ? { version: second } : {}) };
  }
  if (rest.length === 0 && method === 'POST' && second === 'create' && third === undefined) {
    checkName();
    return { op: 'create', perm: 'create', key: name };
  }
  const op = (third ?? '').toLowerCase() as Operation;
  if (rest.length === 0 && method === 'POST' && OPERATIONS.includes(op)) {
    checkName();
    return { op, perm: op, key: name, ...(second ? { version: second } : {}) };
  }
  throw new KvError(405, 'MethodNotAllowed', `The requested resource does not support http method '${method}'.`);
}

/** The client the bearer token was issued to; a 401 with the challenge otherwise. */
async function authenticate(issuer: TokenIssuer, r: KvRequest): Promise<string> {
  const { vault } = r;
  const challenge = { 'WWW-Authenticate': `Bearer authorization="${r.authority}/${vault.tenant.id}", resource="https://${vault.resource}"` };
  const refuse = (message: string) => new KvError(401, 'Unauthorized', message, undefined, challenge);
  const header = r.headers.authorization ?? '';
  const m = /^Bearer\s+(\S+)$/i.exec(header);
  if (!m) throw refuse('AKV10000: Request is missing a Bearer or PoP token.');
  const checked = await issuer.check(m[1]);
  if (!checked.ok) throw refuse(checked.why === 'expired' ? 'AKV10022: The token has expired.' : 'AKV10021: The token could not be validated.');
  const { claims } = checked;
  const expected = `https://${vault.resource}`;
  if (claims.aud !== expected && claims.aud !== `${expected}/`) throw refuse(`AKV10022: Invalid audience. Expected ${expected}, found: ${String(claims.aud)}.`);
  if (claims.tid !== vault.tenant.id) {
    const t = vault.tenant.id;
    throw refuse(`AKV10032: Invalid issuer. Expected one of https://sts.windows.net/${t}/, https://login.microsoftonline.com/${t}/, https://login.windows.net/${t}/, found ${String(claims.iss)}.`);
  }
  if (vault.tenant.revoked.has(claims.uti)) throw refuse('AKV10022: The token has been revoked.');
  return claims.appid;
}

function parseBody(raw: Buffer): Record<string, unknown> {
  try {
    const v = JSON.parse(raw.toString('utf8')) as unknown;
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw badParameter('Bad JSON content found in the request.');
}

function createSpec(body: Record<string, unknown>): KeySpec {
  if (typeof body.kty !== 'string' || body.kty === '') throw badParameter("The 'kty' property is required.");
  if (body.key_size !== undefined && typeof body.key_size !== 'number') throw badParameter("The 'key_size' property must be a number.");
  if (body.crv !== undefined && typeof body.crv !== 'string') throw badParameter("The 'crv' property must be a string.");
  if (body.key_ops !== undefined && (!Array.isArray(body.key_ops) || body.key_ops.some((o) => typeof o !== 'string'))) throw badParameter("The 'key_ops' property must be an array of strings.");
  const attrs = (body.attributes ?? {}) as { enabled?: unknown };
  return {
    kty: body.kty as KeySpec['kty'],
    ...(body.key_size !== undefined ? { key_size: body.key_size as number } : {}),
    ...(body.crv !== undefined ? { crv: body.crv as KeySpec['crv'] } : {}),
    ...(body.key_ops !== undefined ? { key_ops: body.key_ops as string[] } : {}),
    ...(typeof attrs.enabled === 'boolean' ? { enabled: attrs.enabled } : {}),
  };
}

function findVersion(vault: Vault, name: string, version: string | undefined): KeyVersion {
  const versions = vault.versions(name);
  const k = versions && (version ? versions.find((v) => v.version === version.toLowerCase()) : versions[versions.length - 1]);
  if (!k) throw keyNotFound(version ? `${name}/${version}` : name);
  return k;
}

function attributes(k: KeyVersion) {
  return { enabled: k.enabled, created: k.created, updated: k.updated, recoveryLevel: 'Recoverable+Purgeable', recoverableDays: 90, exportable: false };
}

const kidOf = (r: KvRequest, name: string, k: KeyVersion) => `${r.vaultBase}/keys/${name}/${k.version}`;

function bundle(r: KvRequest, name: string, k: KeyVersion): unknown {
  return { key: { kid: kidOf(r, name, k), kty: k.kty, key_ops: k.keyOps, ...publicJwk(k.material) }, attributes: attributes(k) };
}

function bytes(body: Record<string, unknown>, field: string): Buffer {
  const v = body[field];
  if (typeof v !== 'string' || !B64URL_RE.test(v)) throw badParameter(`The '${field}' property must be a base64url string.`);
  return Buffer.from(v, 'base64url');
}

async function cryptoOperation(directory: Directory, r: KvRequest, name: string, k: KeyVersion, op: Operation, alg: string, body: Record<string, unknown>): Promise<unknown> {
  const rsa = k.kty.startsWith('RSA');
  const kid = kidOf(r, name, k);
  if (op === 'sign' || op === 'verify') {
    const spec = SIGN_ALGS[alg];
    if (!spec) throw badParameter(`Invalid algorithm: ${JSON.stringify(alg)}.`);
    if (rsa !== (spec.kind !== 'ecdsa')) throw badParameter(`The algorithm ${alg} is not valid for a ${k.kty} key.`);
    if (spec.curve && spec.curve !== k.crv) throw badParameter(`The algorithm ${alg} is not valid for a key on curve ${k.crv}.`);
    const digest = bytes(body, op === 'sign' ? 'value' : 'digest');
    if (digest.length !== HASH_LENGTH[spec.hash]) throw badParameter(`Invalid digest length ${digest.length} for algorithm ${alg}: expected ${HASH_LENGTH[spec.hash]} bytes.`);
    if (op === 'sign') return { kid, value: (await sign(k.material, spec, digest)).toString('base64url') };
    return { value: await verify(directory.dir, k.material, spec, digest, bytes(body, 'value')) };
  }
  if (!(alg in ENCRYPT_ALGS)) throw badParameter(`Invalid algorithm: ${JSON.stringify(alg)}.`);
  if (!rsa) throw badParameter(`The algorithm ${alg} is not valid for a ${k.kty} key.`);
  const input = bytes(body, 'value');
  if (op === 'encrypt') {
    try {
      return { kid, value: encrypt(k.material, alg, input).toString('base64url') };
    } catch (e) {
      throw badParameter(`Encryption failed: ${(e as Error).message}`);
    }
  }
  const plain = decrypt(k.material, alg, input);
  if (!plain) throw badParameter('Decryption failed: the ciphertext is not valid for this key and algorithm.');
  return { kid, value: plain.toString('base64url') };
}
