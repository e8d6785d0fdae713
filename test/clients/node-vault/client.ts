// node-vault as its users configure it for Coffer (GET ?list=1 instead of the LIST verb), against
// the suite's shared launcher.
import { randomUUID } from 'node:crypto';
import nodeVault from 'node-vault';
import { inject } from 'vitest';

export const coffer = inject('coffer');
export type Client = ReturnType<typeof nodeVault>;

export const vault = (token: string = coffer.rootToken): Client => nodeVault({ endpoint: coffer.url, token, noCustomHTTPVerbs: true });

/** A name no other test uses: the suite's files share one server. */
export const unique = (prefix: string): string => `${prefix}-${randomUUID().slice(0, 8)}`;

/** The status and Vault errors of a call that must fail (node-vault rejects with its ApiResponseError). */
export async function failure(p: Promise<unknown>): Promise<{ status: number; errors: string[] }> {
  try {
    await p;
  } catch (e) {
    const err = e as { response?: { statusCode: number; body?: { errors?: string[] } } };
    if (!err.response) throw e;
    return { status: err.response.statusCode, errors: err.response.body?.errors ?? [] };
  }
  throw new Error('expected the call to fail');
}
