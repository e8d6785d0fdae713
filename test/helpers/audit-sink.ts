// The audit sink server (test/global/audit-sink.ts) as tests see it: URLs for http audit
// devices, switching a sink between working and failing, and the entries it received.
import { inject } from 'vitest';

const base = (): string => `http://127.0.0.1:${inject('auditSinkPort')}`;

export const sinkURL = (name: string): string => `${base()}/log/${name}`;
/** An address nothing listens on. */
export const deadURL = (): string => `http://127.0.0.1:${inject('auditDeadPort')}/log`;

/** ok: records every entry; fail: answers 500 to all; fail-responses: records requests, refuses responses. */
export async function setSinkMode(name: string, mode: 'ok' | 'fail' | 'fail-responses'): Promise<void> {
  const res = await fetch(`${base()}/mode/${name}`, { method: 'PUT', body: mode });
  if (res.status !== 204) throw new Error(`sink mode: ${res.status}`);
}

export interface SinkState {
  /** Bodies exactly as delivered (a batch device's: several entries, one per line). */
  raw: string[];
  // Parsed entries (audit entries are free-form JSON).
  entries: any[];
  /** Deliveries the sink refused. */
  failures: number;
}

export async function sink(name: string): Promise<SinkState> {
  const res = await fetch(`${base()}/entries/${name}`);
  const { entries, failures } = (await res.json()) as { entries: string[]; failures: number };
  // A batch device's body holds one entry per line.
  return { raw: entries, entries: entries.flatMap((e) => e.trimEnd().split('\n')).map((e) => JSON.parse(e)), failures };
}
