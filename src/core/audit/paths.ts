// sys/ paths Vault never audits: seal, unseal and health plumbing, served outside the logical
// request path (a sealed cluster has no audit devices to write to anyway).
export const UNAUDITED_SYS_PATHS = [
  'init',
  'seal-status',
  'seal',
  'step-down',
  'unseal',
  'leader',
  'health',
  'generate-root/*',
  'rekey/*',
  'rekey-recovery-key/*',
  'storage/raft/bootstrap',
  'storage/raft/join',
  'internal/ui/feature-flags',
  // A DR secondary's pulls carry the log itself: cluster traffic, as Vault's cluster port is.
  'replication/dr/internal/*',
];
