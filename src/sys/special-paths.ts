// sys/ paths that work without a token (and, for the seal ones, while sealed), and the ones
// that need sudo. The Worker consults the first list before it resolves a token.

export const SYS_UNAUTHENTICATED_PATHS = [
  'init',
  'seal-status',
  'unseal',
  'health',
  'leader',
  'generate-root/*',
  'decode-token',
  'internal/ui/mounts',
  'internal/ui/mounts/*',
  'wrapping/lookup',
  'replication/status',
  'replication/dr/status',
  // A DR secondary's pulls: authenticated by its activation credential, not a token.
  'replication/dr/internal/*',
  // A DR secondary's operations take a DR operation token (or, for its generation, a recovery
  // key share or a sudo token, as generate-root), not a client token.
  'replication/dr/secondary/generate-operation-token/*',
  'replication/dr/secondary/operation-token/delete',
  'replication/dr/secondary/promote',
  'replication/dr/secondary/disable',
  'replication/dr/secondary/update-primary',
  'replication/dr/secondary/reindex',
];

/** What a DR secondary answers (everything else: "path disabled in replication DR secondary mode"). */
export const DR_SECONDARY_SYS_PATHS = ['replication/*', 'health', 'seal-status', 'leader', 'init', 'unseal', 'generate-root/*'];

/** Reachable while sealed: everything else answers 503. */
export const SYS_SEALED_PATHS = [
  'init',
  'seal-status',
  'unseal',
  'health',
  'leader',
  'generate-root/*',
  'decode-token',
  // A DR secondary is sealed while its first sync has not brought the primary's seal configuration yet.
  'replication/status',
  'replication/dr/status',
];

export const SYS_SUDO_PATHS = ['replication/dr/primary/secondary-token', 'auth/*', 'remount', 'rotate', 'seal', 'step-down', 'raw', 'raw/*', 'audit', 'audit/*', 'config/cors', 'config/auditing/*', 'plugins/catalog/*', 'leases/revoke-prefix/*', 'leases/revoke-force/*', 'leases/lookup/*', 'leases', 'leases/count', 'revoke-prefix/*', 'revoke-force/*'];
