// acceptPrecomputed: when the object takes an outcome the Worker computed before it sent the
// request ("answer first", src/pipeline/offload.ts), and what it answers with.
import { describe, expect, it } from 'vitest';
import type { AuthContext, LogicalRequest, Precomputed } from '../../../src/framework/backend';
import { CofferError } from '../../../src/framework/errors';
import { acceptPrecomputed, callerFingerprint, GrantLedger } from '../../../src/pipeline/offload';

const auth: AuthContext = { accessor: 'acc', policies: ['default', 'signer'], root: false, displayName: 'token', entityId: '', tokenType: 'service', boundCidrs: [], numUses: 0 };

function setup(outcome: Precomputed['outcome'] = { answered: true }) {
  const ledger = new GrantLedger('logical/', () => []);
  const pre: Precomputed = { stamp: ledger.stamp, operation: 'update', sudo: false, caller: callerFingerprint(structuredClone(auth)), outcome };
  const req = { operation: 'update', sudo: false, auth: { ...auth, policies: [...auth.policies] } } as LogicalRequest;
  return { ledger, pre, req };
}

describe('acceptPrecomputed', () => {
  it('takes an outcome computed under the current stamp for the caller and resolution the object resolved', () => {
    const { ledger, pre, req } = setup();
    expect(acceptPrecomputed(ledger, pre, req, false)?.()).toEqual({ answered: true });
  });

  it('takes none once a write the handlers read became visible (the stamp moved)', () => {
    const { ledger, pre, req } = setup();
    ledger.observe([{ key: 'logical/policy/k', value: new Uint8Array(1) }]);
    expect(acceptPrecomputed(ledger, pre, req, false)).toBeNull();
  });

  it('takes none after the object forgot its keys (seal)', () => {
    const { ledger, pre, req } = setup();
    ledger.forget();
    expect(acceptPrecomputed(ledger, pre, req, false)).toBeNull();
  });

  it('takes none for another caller context, operation or sudo', () => {
    const { ledger, pre, req } = setup();
    expect(acceptPrecomputed(ledger, pre, { ...req, auth: { ...auth, numUses: 4 } }, false)).toBeNull();
    expect(acceptPrecomputed(ledger, pre, { ...req, auth: { ...auth, policies: ['default'] } }, false)).toBeNull();
    expect(acceptPrecomputed(ledger, pre, { ...req, auth: null }, false)).toBeNull();
    expect(acceptPrecomputed(ledger, pre, { ...req, operation: 'create' }, false)).toBeNull();
    expect(acceptPrecomputed(ledger, pre, { ...req, sudo: true }, false)).toBeNull();
  });

  it('sees identity policies the object set on its (cached) caller since the fingerprint was taken', () => {
    const { ledger, pre, req } = setup();
    expect(acceptPrecomputed(ledger, pre, req, false)).not.toBeNull();
    req.auth!.identityPolicies = ['from-a-group'];
    expect(acceptPrecomputed(ledger, pre, req, false)).toBeNull();
  });

  it('takes a bare "answered" only when no audit device records: a recording one needs the response', () => {
    const { ledger, pre, req } = setup();
    expect(acceptPrecomputed(ledger, pre, req, true)).toBeNull();
    const withResponse = setup({ response: { data: { signature: 'vault:v1:x' } } });
    expect(acceptPrecomputed(withResponse.ledger, withResponse.pre, withResponse.req, true)?.()).toEqual({ data: { signature: 'vault:v1:x' } });
  });

  it("answers an error outcome with the handler's error, status and extra fields included", () => {
    const { ledger, pre, req } = setup({ status: 400, errors: ['signing key not found'], extra: { data: { a: 1 } } });
    const given = acceptPrecomputed(ledger, pre, req, true);
    expect(given).not.toBeNull();
    let thrown: unknown;
    try {
      given?.();
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(CofferError);
    expect(thrown).toMatchObject({ status: 400, errors: ['signing key not found'], extra: { data: { a: 1 } } });
  });
});
