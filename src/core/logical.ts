// The logical request pipeline shared by every Durable Object that hosts a backend:
// route → existence check → authorisation → field validation → handler → atomic commit.

import {
  matchPath,
  matchesSpecialPath,
  type AuthContext,
  type Backend,
  type LogicalRequest,
  type LogicalResponse,
  type MountConfigView,
  type Operation,
  type WireOperation,
} from '../framework/backend';
import { permissionDenied, unsupportedOperation, unsupportedPath } from '../framework/errors';
import { FieldData } from '../framework/fields';
import type { Transaction } from '../framework/storage';

/** A logical request as it crosses from the Worker into a Durable Object (structured-clonable). */
export interface WireRequest {
  id: string;
  operation: WireOperation;
  /** Full logical path, e.g. "secret/foo". */
  path: string;
  data: Record<string, unknown>;
  auth: AuthContext | null;
  clientIP: string;
  headers: Record<string, string>;
  clientToken?: string;
}

export interface MountContext {
  mountPoint: string;
  mountType: string;
  mountAccessor: string;
  mountConfig: MountConfigView;
  mountOptions: Record<string, string>;
}

export interface AuthorizationRequest {
  auth: AuthContext | null;
  capability: Operation;
  /** Full logical path (mount point + relative path). */
  path: string;
  sudo: boolean;
  data: Record<string, unknown>;
}

/** Decides whether a request may proceed; throws a 403 CofferError when it may not. */
export type Authorizer = (req: AuthorizationRequest) => void;

/**
 * Until the ACL engine lands every protected path needs a root token. Unauthenticated paths
 * never reach the authorizer.
 */
export const rootOnlyAuthorizer: Authorizer = ({ auth }) => {
  if (!auth || !auth.root) throw permissionDenied();
};

export function relativePath(fullPath: string, mountPoint: string): string {
  if (fullPath.startsWith(mountPoint)) return fullPath.slice(mountPoint.length);
  // "secret" addresses the root of mount "secret/".
  return fullPath === mountPoint.slice(0, -1) ? '' : fullPath;
}

export function isUnauthenticatedPath(backend: Backend, relPath: string): boolean {
  return matchesSpecialPath(backend.unauthenticatedPaths, relPath);
}

export async function dispatch(
  backend: Backend,
  wire: WireRequest,
  mount: MountContext,
  storage: Transaction,
  authorize: Authorizer,
): Promise<LogicalResponse> {
  const relPath = relativePath(wire.path, mount.mountPoint);
  const match = matchPath(backend, relPath);
  if (!match) throw unsupportedPath();
  const { def, params } = match;

  const data = { ...wire.data, ...params };
  const req: LogicalRequest = {
    id: wire.id,
    operation: wire.operation === 'write' ? 'update' : wire.operation,
    path: relPath,
    ...mount,
    data,
    storage,
    auth: wire.auth,
    clientIP: wire.clientIP,
    headers: wire.headers,
    clientToken: wire.clientToken,
  };
  const fields = new FieldData(def.fields ?? {}, data);
  // Field errors are reported after authorisation, so callers without access learn nothing.
  let fieldError: unknown = null;
  try {
    fields.validate();
  } catch (e) {
    fieldError = e;
  }

  if (wire.operation === 'write' && def.existenceCheck && fieldError === null) {
    req.operation = (await def.existenceCheck(req, fields)) ? 'update' : 'create';
  }

  if (!isUnauthenticatedPath(backend, relPath)) {
    authorize({
      auth: wire.auth,
      capability: req.operation,
      path: wire.path,
      sudo: matchesSpecialPath(backend.sudoPaths, relPath),
      data,
    });
  }
  if (fieldError !== null) throw fieldError;

  const handler = def.operations[req.operation] ?? (req.operation === 'create' ? def.operations.update : undefined);
  if (!handler) throw unsupportedOperation();

  const response = (await handler(req, fields)) ?? {};
  await storage.commit();

  const unknown = def.arbitraryData ? [] : fields.unknownFields().filter((k) => !(k in params));
  if (unknown.length > 0 && !response.raw) {
    response.warnings = [...(response.warnings ?? []), `Endpoint ignored these unrecognized parameters: [${unknown.join(' ')}]`];
  }
  return response;
}
