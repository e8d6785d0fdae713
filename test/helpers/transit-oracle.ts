// Client for the transit oracle (test/global/transit-oracle.ts): Vault transit formats computed
// independently in Node with node:crypto, for checking Coffer's output.
import { inject } from 'vitest';

/** POSTs `body` to the oracle's `op`; throws with the oracle's message unless it answers 200. */
export async function oracle<T = Record<string, unknown>>(op: string, body: Record<string, unknown>): Promise<T> {
  const res = await fetch(`http://127.0.0.1:${inject('transitOraclePort')}/${op}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { error?: string };
  if (res.status !== 200) throw new Error(`oracle ${op} (${res.status}): ${json.error ?? 'no message'}`);
  return json as T;
}

/** What the oracle's /keygen answers (the forms present depend on the key type). */
export interface Keygen {
  private_pem?: string;
  public_pem?: string;
  pkcs8_der?: string;
  ed25519_private64?: string;
  ed25519_public?: string;
  key?: string;
}
