// What the DR end-to-end tests do against a launcher over plain HTTP: calls, the DR status, a DR
// operation token built from recovery key shares, and waiting for a follower to catch up.

export async function call(base: string, token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}/v1/${path}`, {
    method,
    headers: { ...(token ? { 'X-Vault-Token': token } : {}), 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

export const status = async (base: string) => (await call(base, '', 'GET', 'sys/replication/dr/status')).body.data;

/** A DR operation token generated on `base` from recovery key shares (the replicated primary's). */
export async function operationToken(base: string, keys: string[]): Promise<string> {
  const attempt = await call(base, '', 'POST', 'sys/replication/dr/secondary/generate-operation-token/attempt', { key: keys[0] });
  if (attempt.status !== 200) throw new Error(`attempt: ${attempt.status} ${JSON.stringify(attempt.body)}`);
  let progress = attempt.body;
  for (const key of keys.slice(1)) {
    if (progress.complete) break;
    progress = (await call(base, '', 'POST', 'sys/replication/dr/secondary/generate-operation-token/update', { key, nonce: attempt.body.nonce })).body;
  }
  return decode(progress.encoded_token, attempt.body.otp);
}

/** Waits until `follower` has applied everything `leader` recorded. */
export async function caughtUp(leader: string, follower: string): Promise<void> {
  for (let i = 0; i < 150; i++) {
    const [p, s] = [await status(leader), await status(follower)];
    if (s.state === 'stream-wals' && s.last_remote_wal === p.last_wal && s.merkle_root === p.merkle_root) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${follower} did not catch up with ${leader}`);
}

/** XOR of the base64 (raw) encoded token with the OTP: the token (sys/decode-token's rule). */
export function decode(encoded: string, otp: string): string {
  const bytes = Buffer.from(encoded, 'base64');
  const pad = Buffer.from(otp, 'utf8');
  return Buffer.from(bytes.map((b, i) => b ^ pad[i])).toString('utf8');
}
