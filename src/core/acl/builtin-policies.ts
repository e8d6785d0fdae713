// The built-in policies. `default` is created at the first use of a new cluster and may be edited
// (not deleted); `root` is implicit and immutable; `response-wrapping` is attached only to
// wrapping tokens and is immutable.

export const DEFAULT_POLICY = `# Every token gets this policy unless created with no_default_policy.

# Look up, renew and revoke the token itself.
path "auth/token/lookup-self" {
  capabilities = ["read"]
}
path "auth/token/renew-self" {
  capabilities = ["update"]
}
path "auth/token/revoke-self" {
  capabilities = ["update"]
}

# See what the token may do.
path "sys/capabilities-self" {
  capabilities = ["update"]
}
path "sys/internal/ui/resultant-acl" {
  capabilities = ["read"]
}

# Read the identity entity behind the token.
path "identity/entity/id/{{identity.entity.id}}" {
  capabilities = ["read"]
}
path "identity/entity/name/{{identity.entity.name}}" {
  capabilities = ["read"]
}

# Look up and renew leases of secrets issued to the token.
path "sys/leases/lookup" {
  capabilities = ["update"]
}
path "sys/leases/renew" {
  capabilities = ["update"]
}
path "sys/renew" {
  capabilities = ["update"]
}

# The token's private storage.
path "cubbyhole/*" {
  capabilities = ["create", "read", "update", "delete", "list"]
}

# Response wrapping.
path "sys/wrapping/wrap" {
  capabilities = ["update"]
}
path "sys/wrapping/lookup" {
  capabilities = ["update"]
}
path "sys/wrapping/unwrap" {
  capabilities = ["update"]
}

# Hashing with the system's tools.
path "sys/tools/hash" {
  capabilities = ["update"]
}
path "sys/tools/hash/*" {
  capabilities = ["update"]
}

# Control groups and OIDC provider authorisation requests.
path "sys/control-group/request" {
  capabilities = ["update"]
}
path "identity/oidc/provider/+/authorize" {
  capabilities = ["read", "update"]
}
`;

export const RESPONSE_WRAPPING_POLICY = `# Attached to response-wrapping tokens only.
path "cubbyhole/response" {
  capabilities = ["create", "read"]
}
path "sys/wrapping/unwrap" {
  capabilities = ["update"]
}
`;

/** Policies no one may write or delete. */
export const IMMUTABLE_POLICIES = ['root', 'response-wrapping'];
