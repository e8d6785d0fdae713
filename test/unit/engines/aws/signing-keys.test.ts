// A mount's root key derives its SigV4 signing key once per day, region and service (kept by the
// backend), not on every call; keys given for one call are not kept, and the cache is bounded.
import { describe, expect, it } from 'vitest';
import { SigningKeys } from '../../../../src/engines/aws/client';
import { emptyRootConfig, iamClient, stsClient, type RootConfig } from '../../../../src/engines/aws/config';

/** Counts the signing keys aws4fetch derived and stored. */
class Counting extends SigningKeys {
  sets = 0;
  override set(key: string, value: ArrayBuffer): this {
    this.sets++;
    return super.set(key, value);
  }
}

// Nothing listens there: each call is signed, then fails to connect (no retries).
const config: RootConfig = { ...emptyRootConfig(), accessKey: 'AKIAROOT', secretKey: 'root-secret', iamEndpoint: 'http://127.0.0.1:9', stsEndpoint: 'http://127.0.0.1:9', maxRetries: 0 };
const failing = async (call: Promise<unknown>) => expect(call).rejects.toMatchObject({ code: 'RequestError' });

describe('SigV4 signing keys', () => {
  it('are derived once for the root key and reused by later clients of the mount', async () => {
    const keys = new Counting();
    const host = { env: {}, signingKeys: keys };
    await failing(iamClient(config, host).call('GetUser'));
    await failing(iamClient(config, host).call('GetUser'));
    expect(keys.sets).toBe(1);
    await failing(stsClient(config, host).call('GetCallerIdentity'));
    await failing(stsClient(config, host).call('GetCallerIdentity'));
    expect(keys.sets).toBe(2);
    expect(keys.size).toBe(2);
  });

  it('are not kept for credentials given for one call (a new user\'s, a rotation\'s)', async () => {
    const keys = new Counting();
    await failing(stsClient(config, { env: {}, signingKeys: keys }, { accessKeyId: 'AKIANEW', secretAccessKey: 'new-secret' }).call('GetCallerIdentity'));
    expect(keys.sets).toBe(0);
  });

  it('start over past their bound', () => {
    const keys = new SigningKeys();
    for (let i = 0; i < 40; i++) keys.set(`k${i}`, new ArrayBuffer(32));
    expect(keys.size).toBeLessThanOrEqual(32);
    expect(keys.has('k39')).toBe(true);
  });
});
