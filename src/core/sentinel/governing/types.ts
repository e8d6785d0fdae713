// Role- and endpoint-governing policies as stored in the SystemObject and shipped to every object
// that serves requests (plain JSON: the set crosses Durable Object RPC).

export const ENFORCEMENT_LEVELS = ['advisory', 'soft-mandatory', 'hard-mandatory'] as const;
export type EnforcementLevel = (typeof ENFORCEMENT_LEVELS)[number];

export interface StoredRgp {
  name: string;
  policy: string;
  enforcement_level: EnforcementLevel;
}

export interface StoredEgp extends StoredRgp {
  /** As the operator wrote them, leading "/" removed: "secret/*", "sys/mounts", "*". */
  paths: string[];
}

/** Every governing policy of the cluster; `version` changes with every write or delete. */
export interface GoverningSet {
  version: number;
  rgps: StoredRgp[];
  egps: StoredEgp[];
}

/** Fetches the cluster's set (null while sealed). */
export type GoverningFetch = () => Promise<GoverningSet | null>;
