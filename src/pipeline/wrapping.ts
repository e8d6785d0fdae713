// Response wrapping (X-Vault-Wrap-TTL): the response a client asked to have wrapped is stored,
// as the exact envelope it would have received, beside a new single-use token; the client gets
// only that token's wrap_info. The token lives on its own token-store shard, which also keeps
// the stored response and deletes it with the token.

import type { DispatchHooks, MountContext, WireRequest } from './dispatch';
import type { WrappedResponse } from '../core/tokens/store';
import { newServiceToken } from '../core/tokens/entry';
import type { LogicalResponse, WrapInfo } from '../framework/backend';
import { formatRFC3339Nano } from '../framework/duration';
import { encodeJson, stringifyJson } from '../framework/json-numbers';
import { envelopeBody } from './envelope';

/** Stores a wrapping token (on the shard that owns it) holding `record`; returns its accessor. */
export type WrapStore = (token: string, record: WrappedResponse) => Promise<{ accessor: string }>;

/** The JSON text a wrapped response is kept as. */
export function wrappedResponseText(response: LogicalResponse, wire: WireRequest, mount: MountContext): string {
  if (response.raw) return stringifyJson(response.raw.body);
  const body = envelopeBody(response, { requestId: wire.id, path: wire.path, mountType: mount.mountType });
  return encodeJson(body).trimEnd();
}

/** Vault reports the accessor of a token inside the wrapped response (login, token create). */
function wrappedAccessorOf(response: LogicalResponse): string {
  const fromAuth = response.auth?.accessor;
  if (typeof fromAuth === 'string') return fromAuth;
  const body = response.raw?.body as { auth?: { accessor?: unknown } } | undefined;
  return typeof body?.auth?.accessor === 'string' ? body.auth.accessor : '';
}

export async function wrapResponse(response: LogicalResponse, wire: WireRequest, mount: MountContext, store: WrapStore): Promise<WrapInfo> {
  const record: WrappedResponse = {
    response: wrappedResponseText(response, wire, mount),
    creationTTL: wire.wrapTTL,
    creationTime: formatRFC3339Nano(Date.now()),
    creationPath: wire.path,
    wrappedAccessor: wrappedAccessorOf(response),
  };
  return storeWrapped(record, store);
}

/** Creates a wrapping token for a record (new wraps and rewraps). */
export async function storeWrapped(record: WrappedResponse, store: WrapStore): Promise<WrapInfo> {
  const token = newServiceToken();
  const { accessor } = await store(token, record);
  return {
    token,
    accessor,
    ttl: record.creationTTL,
    creation_time: record.creationTime,
    creation_path: record.creationPath,
    ...(record.wrappedAccessor ? { wrapped_accessor: record.wrappedAccessor } : {}),
  };
}

/** Signs a wrapping token's JWT form, naming the address to unwrap it at. */
export type WrapJwtSigner = (info: WrapInfo, addr: string) => Promise<string>;

/**
 * The dispatch hook that wraps responses for requests that asked for it. A response that wants
 * its token as a JWT (`wrapJwtAddr`) gets one where a signer is given.
 */
export function wrapHook(store: WrapStore, jwt?: WrapJwtSigner): NonNullable<DispatchHooks['wrap']> {
  return async (response, wire, mount) => {
    const info = await wrapResponse(response, wire, mount, store);
    return jwt && response.wrapJwtAddr ? { ...info, token: await jwt(info, response.wrapJwtAddr) } : info;
  };
}
