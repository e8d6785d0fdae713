// Types of verify-chain.mjs (plain JavaScript so that Node runs it without a build).

export declare const GENESIS: string;
/** How far back a run of entries sent again after a crash may start. */
export declare const REDELIVERY_WINDOW: number;

export interface FoundEntry {
  /** The entry's exact JSON text (what the chain hashes); null for a damaged entry. */
  text: string | null;
  entry: { type: string; chain: { device: string; seq: number; prev: string } } | null;
}

export declare function findEntry(line: string): FoundEntry | null;

export type BreakKind = 'corrupt' | 'genesis' | 'gap' | 'reorder' | 'mismatch';

export interface BrokenLink {
  line: number;
  device: string;
  seq: number;
  kind: BreakKind;
  message: string;
  expected: string;
  found: string;
}

export interface DeviceChain {
  device: string;
  firstSeq: number;
  firstLine: number;
  lastSeq: number;
  lastLine: number;
  /** Hash of the last entry seen. */
  head: string;
  count: number;
  /** Exact copies of recent entries, in order (a group sent again after a crash), counted once. */
  redelivered: number;
  /** The log starts after seq 1 (rotated or truncated at the start): not a break. */
  startsAfterGenesis: boolean;
}

export interface HeadCheck {
  hash: string;
  found: boolean;
  device?: string;
  seq?: number;
  line?: number;
  /** Entries of that device after the head. */
  after?: number;
}

export interface VerifyReport {
  ok: boolean;
  lines: number;
  entries: number;
  devices: DeviceChain[];
  broken: BrokenLink | null;
  head: HeadCheck | null;
}

export declare function verifyLog(logText: string, options?: { head?: string }): Promise<VerifyReport>;
export declare function formatReport(report: VerifyReport): string;
