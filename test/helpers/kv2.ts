// Helpers for the KV v2 integration tests.
import { env } from 'cloudflare:test';
import { expect } from 'vitest';
import { api } from './api';

/** Go's RFC3339Nano in UTC: no trailing zeros in the fraction. */
export const GO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d*[1-9])?Z$/;

export async function mountKv2(token: string, path: string, extra: Record<string, unknown> = {}): Promise<void> {
  const r = await api('POST', `sys/mounts/${path}`, { token, body: { type: 'kv', options: { version: '2' }, ...extra } });
  expect(r.status, r.text).toBe(204);
}

/** The mount's Durable Object, for alarms and white-box checks of its storage. */
export async function mountObject(token: string, path: string) {
  const uuid = (await api('GET', `sys/mounts/${path}`, { token })).body.data.uuid as string;
  return env.MOUNTS.get(env.MOUNTS.idFromName(uuid));
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const MERGE_PATCH = { 'Content-Type': 'application/merge-patch+json' };
