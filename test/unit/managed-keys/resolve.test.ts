// Which managed key a mount may use: by name or UUID, listed in allowed_managed_keys or any_mount.
import { describe, expect, it } from 'vitest';
import { buildEntry } from '../../../src/managed-keys/entry';
import { managedKeyRef, mountMayUse, resolveManagedKey } from '../../../src/managed-keys/resolve';
import { ManagedKeyError, type ManagedKeyEntry } from '../../../src/managed-keys/types';

const PKCS11 = { library: 'softhsm', slot: '0', pin: '1234', key_label: 'k', mechanism: '0x0001' };
let n = 0;
const key = (name: string, extra: Record<string, unknown> = {}): ManagedKeyEntry =>
  buildEntry({ type: 'pkcs11', name, raw: { ...PKCS11, ...extra }, previous: null, newId: () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}` });

const hsm = key('hsm');
const shared = key('shared', { any_mount: 'true' });
const other = key('other');
const entries = [hsm, shared, other];

function refusal(fn: () => unknown): { status: number; message: string } {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ManagedKeyError);
    return { status: (e as ManagedKeyError).status, message: (e as ManagedKeyError).errors[0] };
  }
  throw new Error('expected a refusal');
}

describe('resolveManagedKey', () => {
  it('finds a listed key by name or by UUID', () => {
    expect(resolveManagedKey(entries, ['hsm'], { name: 'hsm' })).toBe(hsm);
    expect(resolveManagedKey(entries, ['x', 'hsm'], { id: hsm.uuid })).toBe(hsm);
  });

  it('lets any mount use a key with any_mount', () => {
    expect(resolveManagedKey(entries, [], { name: 'shared' })).toBe(shared);
    expect(resolveManagedKey(entries, ['hsm'], { id: shared.uuid })).toBe(shared);
  });

  it('refuses a key the mount does not list', () => {
    for (const ref of [{ name: 'other' }, { id: other.uuid }]) {
      expect(refusal(() => resolveManagedKey(entries, ['hsm'], ref))).toEqual({
        status: 400,
        message: 'managed key "other" is not allowed on this mount: add it to the mount\'s allowed_managed_keys (sys/mounts/<path>/tune) or set any_mount on the key',
      });
    }
  });

  it('matches allowed_managed_keys by exact name only (not by UUID, not case-folded)', () => {
    expect(mountMayUse(hsm, [hsm.uuid])).toBe(false);
    expect(mountMayUse(hsm, ['HSM'])).toBe(false);
    expect(mountMayUse(hsm, ['hsm'])).toBe(true);
  });

  it("says when no key has the name or UUID (Vault's wording), before any permission question", () => {
    expect(refusal(() => resolveManagedKey(entries, [], { name: 'missing' }))).toEqual({ status: 400, message: 'no managed key found with name "missing"' });
    expect(refusal(() => resolveManagedKey(entries, [], { id: '12345678-1234-5678-9012-123456789012' }))).toEqual({
      status: 400,
      message: 'no managed key found with uuid "12345678-1234-5678-9012-123456789012"',
    });
    // A name is not a UUID, nor the other way round.
    expect(refusal(() => resolveManagedKey(entries, ['hsm'], { id: 'hsm' })).message).toBe('no managed key found with uuid "hsm"');
    expect(refusal(() => resolveManagedKey(entries, ['hsm'], { name: hsm.uuid })).message).toMatch(/^no managed key found with name/);
  });

  it('takes any iterable of entries', () => {
    expect(resolveManagedKey(new Set(entries), ['hsm'], { name: 'hsm' })).toBe(hsm);
    expect(refusal(() => resolveManagedKey([], ['hsm'], { name: 'hsm' })).message).toBe('no managed key found with name "hsm"');
  });
});

describe('managedKeyRef', () => {
  it('makes a reference from managed_key_name or managed_key_id', () => {
    expect(managedKeyRef(' hsm ', '')).toEqual({ name: 'hsm' });
    expect(managedKeyRef('', hsm.uuid)).toEqual({ id: hsm.uuid });
  });

  it('refuses neither and both', () => {
    expect(refusal(() => managedKeyRef('', ' ')).message).toBe('missing argument managed_key_name or managed_key_id');
    expect(refusal(() => managedKeyRef('hsm', hsm.uuid)).message).toBe('only one argument of managed_key_name or managed_key_id should be specified');
  });
});
