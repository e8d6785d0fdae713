// The pipeline's Authorizer over a compiled ACL: the capability of the operation on the canonical
// path, parameter constraints, wrapping TTL bounds, and sudo where the path requires it.

import type { AuthContext } from '../framework/backend';
import { permissionDenied } from '../framework/errors';
import type { ACL } from '../core/acl/acl';
import type { AclCache, Compiled } from '../core/acl/cache';
import type { Maybe } from '../framework/steps';
import type { IdentityView } from '../core/identity/cache';
import type { GoverningPolicies } from '../core/sentinel/governing';
import { anonymousAuthorizer, type Authorizer, type GovernRequest } from './dispatch';

export function aclAuthorizer(acl: ACL, wrapTTL: number): Authorizer {
  return {
    authorize: ({ capability, path, sudo, data }) => {
      const result = acl.check({ operation: capability, path, data, wrapTTL });
      if (!result.allowed || (sudo && !result.sudo)) throw permissionDenied();
      return { sudo: result.sudo };
    },
    grantsCreateAndUpdate: ({ path, data }) =>
      acl.check({ operation: 'create', path, data, wrapTTL }).allowed && acl.check({ operation: 'update', path, data, wrapTTL }).allowed,
  };
}

/** Enforcement of the governing policies for one caller (root tokens are never governed). */
function governed(base: Authorizer, policies: GoverningPolicies, auth: AuthContext | null, view: IdentityView | null): Authorizer {
  return {
    ...base,
    govern: ({ wire, operation, unauthenticated }: GovernRequest) => {
      const { records, denial } = policies.enforce({
        request: {
          path: wire.path,
          operation,
          data: wire.data,
          remoteAddr: wire.clientIP,
          policyOverride: wire.policyOverride === true,
          unauthenticated,
          wrapTTL: wire.wrapTTL,
        },
        auth,
        identity: view?.sentinel ?? null,
        policyNames: auth ? [...auth.policies, ...(auth.identityPolicies ?? [])] : [],
      });
      // Recorded for the request's audit entries, denied or not.
      if (records.length > 0) wire.sentinel = records;
      if (denial) throw denial;
    },
  };
}

/**
 * The authorizer for a request: the caller's ACL (refusal of everything without a token), then
 * the cluster's RGPs and EGPs when there are any. At once when all of it is in memory.
 */
export function authorizerFor(acls: AclCache, auth: AuthContext | null, wrapTTL: number): Maybe<Authorizer> {
  const governing = acls.governor?.policies() ?? null;
  if (governing instanceof Promise) return governing.then((g) => authorizerWith(acls, auth, wrapTTL, g));
  return authorizerWith(acls, auth, wrapTTL, governing);
}

function authorizerWith(acls: AclCache, auth: AuthContext | null, wrapTTL: number, governing: GoverningPolicies | null): Maybe<Authorizer> {
  if (!auth) return governing ? governed(anonymousAuthorizer, governing, null, null) : anonymousAuthorizer;
  const compiled = acls.compiledNow(auth);
  if (compiled) return compiledAuthorizer(compiled, auth, wrapTTL, governing);
  return acls.compiledFor(auth).then((c) => compiledAuthorizer(c, auth, wrapTTL, governing));
}

function compiledAuthorizer({ acl, identityPolicies, view }: Compiled, auth: AuthContext, wrapTTL: number, governing: GoverningPolicies | null): Authorizer {
  // Recorded on the request's auth for its audit entries.
  auth.identityPolicies = identityPolicies;
  const base = aclAuthorizer(acl, wrapTTL);
  return governing && !auth.root ? governed(base, governing, auth, view) : base;
}
