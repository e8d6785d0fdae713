// Role- and endpoint-governing policies: storage and validation (store.ts), the compiled set each
// serving object keeps and enforces (governor.ts), EGP path matching, and the denial wording.

export { Governor, GoverningPolicies, type Enforcement, type GovernFacts } from './governor';
export { GoverningStore, type GoverningKind } from './store';
export { egpPathList, egpPathMatches, parseEgpPath, type EgpPath } from './egp-paths';
export type { SentinelRecord } from './verdict';
export type { EnforcementLevel, GoverningFetch, GoverningSet, StoredEgp, StoredRgp } from './types';
