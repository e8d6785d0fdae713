// The CRL store at scale: 100,000 revocation entries written straight into a MemoryStorage are
// built into a signed CRL stored in chunks below the storage value limit, and read back whole.
// Also: numbering across complete and delta CRLs, chunk clean-up, revocation cost, grouping.
import { beforeAll, describe, expect, it } from 'vitest';
import { buildCertificate, emptySubject, parseCertificate } from '../../../../src/crypto/pki/certificate';
import { parseCrl } from '../../../../src/crypto/pki/crl';
import { generateKey, signerFor, subjectKeyId, verifySignature, type PkiKey } from '../../../../src/crypto/pki/keys';
import { randomSerial } from '../../../../src/crypto/pki/serial';
import { toBase64 } from '../../../../src/crypto/encoding';
import { formatRFC3339Nano } from '../../../../src/framework/duration';
import { compareKeys, MemoryStorage, putJSON, type StorageOp } from '../../../../src/framework/storage';
import { AlgorithmIdentifier } from '@peculiar/asn1-x509';
import { AsnConvert } from '@peculiar/asn1-schema';
import { certTemplate } from '../../../helpers/pki';
import {
  CRL_CHUNK_SIZE,
  crlIdOf,
  crlPeriodic,
  freshenCrls,
  loadCrlState,
  readCrl,
  rebuildCrls,
  rebuildDeltaCrls,
} from '../../../../src/engines/pki/crl-store';
import { addToDeltaLog, deltaLogSerials, loadPending, markCrlsStale, REVOKED_PREFIX, saveRevoked, type RevokedEntry } from '../../../../src/engines/pki/revoked-store';
import { revokeCertificate } from '../../../../src/engines/pki/paths/revoke';
import { ALL_USAGES, saveIssuer, saveIssuersConfig, saveKey, type IssuerEntry } from '../../../../src/engines/pki/store';

const DAY = 86_400_000;

/**
 * MemoryStorage with its key order cached between writes: the plain one sorts every key on each
 * scan, which makes paging through 100k keys quadratic (SQLite walks an index instead).
 */
class IndexedMemoryStorage extends MemoryStorage {
  private sorted: string[] | null = null;
  override async put(key: string, value: Uint8Array) {
    if (!this.data.has(key)) this.sorted = null;
    await super.put(key, value);
  }
  override async delete(key: string) {
    if (this.data.has(key)) this.sorted = null;
    await super.delete(key);
  }
  override async applyBatch(ops: StorageOp[]) {
    this.sorted = null;
    await super.applyBatch(ops);
  }
  override async scan(prefix: string, after: string, limit: number) {
    this.sorted ??= [...this.data.keys()].sort(compareKeys);
    const keys = this.sorted;
    // The first key at or after the prefix and after `after` (both conditions are monotone).
    let lo = 0;
    let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (compareKeys(keys[mid], prefix) >= 0 && compareKeys(keys[mid], after) > 0) hi = mid;
      else lo = mid + 1;
    }
    const out: string[] = [];
    for (let i = lo; i < keys.length && out.length < limit && keys[i].startsWith(prefix); i++) out.push(keys[i]);
    return out;
  }
}

interface Ca {
  key: PkiKey;
  der: Uint8Array;
  entry: IssuerEntry;
}

async function makeCa(storage: MemoryStorage, id: string, keyOf?: PkiKey, cn = 'Root', keyId = `key-${id}`): Promise<Ca> {
  const key = keyOf ?? (await generateKey('ec', 256));
  const skid = await subjectKeyId(key.spki);
  const now = Date.now();
  const der = await buildCertificate(
    certTemplate(key.spki, {
      subject: { ...emptySubject(), commonName: cn },
      notBefore: new Date(now - 60_000),
      notAfter: new Date(now + 365 * DAY),
      isCA: true,
      keyUsage: ['CertSign', 'CRLSign'],
    }),
    { subjectDer: null, skid, signer: await signerFor(key, 0, false) },
  );
  await saveKey(storage, { id: keyId, name: '', type: key.type, bits: key.bits, pkcs8: toBase64(key.pkcs8), spki: toBase64(key.spki) });
  const entry: IssuerEntry = {
    id,
    name: '',
    keyId,
    certificate: parseCertificate(der).pem,
    serial: parseCertificate(der).serial,
    manualChain: null,
    leafNotAfterBehavior: 'err',
    usage: [...ALL_USAGES],
    revocationSignatureAlgorithm: '',
    aia: null,
    revoked: false,
    revocationTime: 0,
    revocationTimeNanos: '',
    lastModified: now,
  };
  await saveIssuer(storage, entry);
  return { key, der, entry };
}

function revoked(serial: string, issuerId: string, at: number): RevokedEntry {
  return {
    serial,
    // The builder never parses the certificate of an entry whose issuer it knows.
    certificate: 'AA==',
    revocationTime: Math.floor(at / 1000),
    revocationTimeNanos: formatRFC3339Nano(at),
    issuerId,
    expiresAt: Math.floor((at + 30 * DAY) / 1000),
  };
}

async function verifies(ca: Ca, der: Uint8Array): Promise<boolean> {
  const crl = parseCrl(der);
  return await verifySignature(ca.key.spki, crl.signatureAlgorithm as AlgorithmIdentifier, crl.tbsDer, crl.signature);
}

describe('100,000 revoked certificates', () => {
  const storage = new IndexedMemoryStorage();
  let ca: Ca;
  const serials = new Set<string>();
  const now = Date.now();

  beforeAll(async () => {
    ca = await makeCa(storage, 'root');
    await saveIssuersConfig(storage, { default: 'root', defaultFollowsLatestIssuer: false });
    while (serials.size < 100_000) serials.add(randomSerial());
    let i = 0;
    for (const s of serials) await putJSON(storage, REVOKED_PREFIX + s.replace(/:/g, '-'), revoked(s, 'root', now - i++ * 1000));
  }, 120_000);

  it('builds one signed CRL holding every entry, stored in chunks under the value limit', async () => {
    const warnings = await rebuildCrls(storage, now, false);
    expect(warnings).toEqual([]);
    for (const [key, value] of storage.data) expect(value.length, key).toBeLessThanOrEqual(1024 * 1024);

    const crlId = await crlIdOf(storage, 'root');
    expect(crlId).not.toBe('');
    const stored = (await readCrl(storage, crlId, 'complete'))!;
    expect(stored.meta.chunks).toBe(Math.ceil(stored.der.length / CRL_CHUNK_SIZE));
    expect(stored.meta.chunks).toBeGreaterThan(1);
    const crl = parseCrl(stored.der);
    expect(crl.entries.length).toBe(100_000);
    // (A hand-rolled comparison: deep-equality of 100k-element sets is slow.)
    expect(crl.serials.filter((x) => !serials.has(x))).toEqual([]);
    expect(new Set(crl.serials).size).toBe(serials.size);
    expect(crl.number).toBe(1n);
    expect(crl.deltaBase).toBeNull();
    expect(crl.issuerDer).toEqual(parseCertificate(ca.der).subjectDer);
    expect(crl.akid).toEqual(await subjectKeyId(ca.key.spki));
    expect(crl.nextUpdate!.getTime() - crl.thisUpdate.getTime()).toBe(72 * 3600_000);
    expect(await verifies(ca, stored.der)).toBe(true);
  }, 120_000);

  it('a revocation costs the same as with an empty list: it writes a few small records, no CRL', async () => {
    const mountStorage = storage;
    const before = new Map(mountStorage.data);
    const leafKey = await generateKey('ec', 256);
    const leafDer = await buildCertificate(
      certTemplate(leafKey.spki, {
        subject: { ...emptySubject(), commonName: 'leaf.example.com' },
        notBefore: new Date(now - 60_000),
        notAfter: new Date(now + DAY),
        keyUsage: ['DigitalSignature'],
      }),
      { subjectDer: parseCertificate(ca.der).subjectDer, skid: await subjectKeyId(ca.key.spki), signer: await signerFor(ca.key, 0, false) },
    );
    const leaf = parseCertificate(leafDer);
    const r = await revokeCertificate(mountStorage, { cert: leaf, issuerId: 'root' }, Date.now());
    expect(r.data?.state).toBe('revoked');
    const written = [...mountStorage.data.keys()].filter((k) => before.get(k) !== mountStorage.data.get(k));
    // The entry and the "CRLs are stale" flag; nothing under crls/<id>/.
    expect(written.sort()).toEqual(['crls/pending', REVOKED_PREFIX + leaf.serial.replace(/:/g, '-')].sort());
    expect((await loadPending(mountStorage)).complete).toBe(true);
    serials.add(leaf.serial);
  });

  it('the next read-side freshen rebuilds it, with the next CRL number, and drops chunks no longer needed', async () => {
    // 100,001 entries is over the default max_crl_entries (100,000): the CRL stays as it was.
    await freshenCrls(storage, now + 500);
    const crlId = await crlIdOf(storage, 'root');
    expect(parseCrl((await readCrl(storage, crlId, 'complete'))!.der).number).toBe(1n);
    expect((await loadCrlState(storage)).lastError).toBe(
      'Error during CRL building: error building CRL: revocation list size (100001) exceeds configured maximum (100000)',
    );
    expect((await loadPending(storage)).complete).toBe(true);

    await putJSON(storage, 'config/crl', { maxCrlEntries: -1 });
    await freshenCrls(storage, now + 1000);
    let crl = parseCrl((await readCrl(storage, crlId, 'complete'))!.der);
    expect(crl.number).toBe(2n);
    expect(crl.entries.length).toBe(100_001);
    expect((await loadCrlState(storage)).lastError).toBe('');
    expect((await loadPending(storage)).complete).toBe(false);

    // Most entries go away (as after a tidy): the CRL shrinks to one chunk and the rest are deleted.
    for (const key of [...storage.data.keys()].filter((k) => k.startsWith(REVOKED_PREFIX)).slice(10)) storage.data.delete(key);
    await rebuildCrls(storage, now + 2000, false);
    const stored = (await readCrl(storage, crlId, 'complete'))!;
    crl = parseCrl(stored.der);
    expect(crl.number).toBe(3n);
    expect(crl.entries.length).toBe(10);
    expect(stored.meta.chunks).toBe(1);
    expect([...storage.data.keys()].filter((k) => k.startsWith(`crls/${crlId}/complete/`)).sort()).toEqual([
      `crls/${crlId}/complete/0`,
      `crls/${crlId}/complete/meta`,
    ]);
  }, 120_000);
});

describe('delta CRLs and numbering', () => {
  it('a delta CRL lists revocations since the complete one, shares its number counter and names its base', async () => {
    const storage = new MemoryStorage();
    const ca = await makeCa(storage, 'ca1');
    await saveIssuersConfig(storage, { default: 'ca1', defaultFollowsLatestIssuer: false });
    await putJSON(storage, 'config/crl', { autoRebuild: true, enableDelta: true });
    const t0 = Date.now();
    await saveRevoked(storage, revoked('01:02', 'ca1', t0));
    await rebuildCrls(storage, t0, false);
    const id = await crlIdOf(storage, 'ca1');
    // Complete #1, then the empty delta #2 built right after it.
    expect(parseCrl((await readCrl(storage, id, 'complete'))!.der).number).toBe(1n);
    let delta = parseCrl((await readCrl(storage, id, 'delta'))!.der);
    expect([delta.number, delta.deltaBase, delta.entries.length]).toEqual([2n, 1n, 0]);

    await saveRevoked(storage, revoked('0a:0b', 'ca1', t0 + 1000));
    await addToDeltaLog(storage, '0a:0b');
    await markCrlsStale(storage, { delta: true });
    await rebuildDeltaCrls(storage, t0 + 2000);
    const deltaDer = (await readCrl(storage, id, 'delta'))!.der;
    delta = parseCrl(deltaDer);
    expect([delta.number, delta.deltaBase, delta.serials]).toEqual([3n, 1n, ['0a:0b']]);
    expect(await verifies(ca, deltaDer)).toBe(true);
    expect((await loadPending(storage)).delta).toBe(false);

    // The next complete CRL holds both and empties the delta log.
    await rebuildCrls(storage, t0 + 3000, false);
    const complete = parseCrl((await readCrl(storage, id, 'complete'))!.der);
    expect([complete.number, complete.serials.sort()]).toEqual([4n, ['01:02', '0a:0b']]);
    expect(await deltaLogSerials(storage)).toEqual([]);
    delta = parseCrl((await readCrl(storage, id, 'delta'))!.der);
    expect([delta.number, delta.deltaBase, delta.entries.length]).toEqual([5n, 4n, 0]);
  });

  it('periodic rebuilds the delta once delta_rebuild_interval has passed, and the complete CRL in its grace period', async () => {
    const storage = new MemoryStorage();
    await makeCa(storage, 'ca1');
    await saveIssuersConfig(storage, { default: 'ca1', defaultFollowsLatestIssuer: false });
    await putJSON(storage, 'config/crl', { autoRebuild: true, enableDelta: true, deltaRebuildInterval: '15m', expiry: '72h', autoRebuildGracePeriod: '12h' });
    const t0 = Date.now();
    // First run: nothing built yet (issuers changed) → complete + delta; next wake at expiry - grace.
    expect(await crlPeriodic(storage, t0)).toBe(t0 + 60 * 3600_000);
    const id = await crlIdOf(storage, 'ca1');

    await saveRevoked(storage, revoked('0c', 'ca1', t0));
    await addToDeltaLog(storage, '0c');
    await markCrlsStale(storage, { delta: true });
    // Too early for a delta: it asks to run when the interval is up.
    expect(await crlPeriodic(storage, t0 + 1000)).toBe(t0 + 15 * 60_000);
    expect(parseCrl((await readCrl(storage, id, 'delta'))!.der).serials).toEqual([]);
    await crlPeriodic(storage, t0 + 15 * 60_000);
    expect(parseCrl((await readCrl(storage, id, 'delta'))!.der).serials).toEqual(['0c']);
    // The complete CRL still lacks it until the grace period starts.
    expect(parseCrl((await readCrl(storage, id, 'complete'))!.der).serials).toEqual([]);
    await crlPeriodic(storage, t0 + 60 * 3600_000);
    expect(parseCrl((await readCrl(storage, id, 'complete'))!.der).serials).toEqual(['0c']);
    expect((await loadCrlState(storage)).nextUpdate).toBe(t0 + 60 * 3600_000 + 72 * 3600_000);
  });
});

describe('grouping and placement', () => {
  it('issuers sharing key and subject share a CRL; entries of unknown issuers go on the default one', async () => {
    const storage = new MemoryStorage();
    const a = await makeCa(storage, 'a', undefined, 'Root A');
    // A reissued "Root A" with the same key: same CRL.
    await makeCa(storage, 'a2', a.key, 'Root A', 'key-a');
    await makeCa(storage, 'b', undefined, 'Root B');
    await saveIssuersConfig(storage, { default: 'b', defaultFollowsLatestIssuer: false });
    const t = Date.now();
    await saveRevoked(storage, revoked('aa', 'a2', t));
    await saveRevoked(storage, revoked('bb', 'b', t));
    // Unknown issuer and an unparseable certificate: the default issuer's CRL.
    await saveRevoked(storage, revoked('cc', 'gone', t));
    await rebuildCrls(storage, t, false);
    const idA = await crlIdOf(storage, 'a');
    expect(await crlIdOf(storage, 'a2')).toBe(idA);
    const idB = await crlIdOf(storage, 'b');
    expect(idB).not.toBe(idA);
    expect(parseCrl((await readCrl(storage, idA, 'complete'))!.der).serials).toEqual(['aa']);
    expect(parseCrl((await readCrl(storage, idB, 'complete'))!.der).serials.sort()).toEqual(['bb', 'cc']);
  });

  it('an issuer set without crl-signing usage keeps its last CRL (frozen) and a build warns about it', async () => {
    const storage = new MemoryStorage();
    const a = await makeCa(storage, 'a');
    await saveIssuersConfig(storage, { default: 'a', defaultFollowsLatestIssuer: false });
    const t = Date.now();
    await rebuildCrls(storage, t, false);
    const id = await crlIdOf(storage, 'a');
    await saveIssuer(storage, { ...a.entry, usage: ['read-only'], lastModified: t + 1 });
    await saveRevoked(storage, revoked('dd', 'a', t));
    const warnings = await rebuildCrls(storage, t + 1000, false);
    expect(warnings[0]).toMatch(/^Issuer equivalency set with associated keys lacked an issuer with CRL Signing KeyUsage/);
    const crl = parseCrl((await readCrl(storage, id, 'complete'))!.der);
    expect([crl.number, crl.serials]).toEqual([1n, []]);
  });

  it('max_crl_entries refuses a build over the limit and keeps the stored CRL', async () => {
    const storage = new MemoryStorage();
    await makeCa(storage, 'a');
    await saveIssuersConfig(storage, { default: 'a', defaultFollowsLatestIssuer: false });
    await putJSON(storage, 'config/crl', { maxCrlEntries: 2 });
    const t = Date.now();
    await rebuildCrls(storage, t, false);
    for (const s of ['01', '02', '03']) await saveRevoked(storage, revoked(s, 'a', t));
    await expect(rebuildCrls(storage, t + 1, false)).rejects.toThrow('Error during CRL building: error building CRL: revocation list size (3) exceeds configured maximum (2)');
    const id = await crlIdOf(storage, 'a');
    expect(parseCrl((await readCrl(storage, id, 'complete'))!.der).number).toBe(1n);
    // A read-side freshen does not fail: it records the error and serves the old CRL.
    await markCrlsStale(storage, { complete: true });
    await freshenCrls(storage, t + 2);
    expect((await loadCrlState(storage)).lastError).toMatch(/exceeds configured maximum/);
  });
});

describe('signature algorithm', () => {
  it('signs with the issuer revocation_signature_algorithm', async () => {
    const storage = new MemoryStorage();
    const key = await generateKey('rsa', 2048);
    const ca = await makeCa(storage, 'r', key);
    await saveIssuer(storage, { ...ca.entry, revocationSignatureAlgorithm: 'SHA384WithRSAPSS' });
    await saveIssuersConfig(storage, { default: 'r', defaultFollowsLatestIssuer: false });
    await rebuildCrls(storage, Date.now(), false);
    const der = (await readCrl(storage, await crlIdOf(storage, 'r'), 'complete'))!.der;
    const crl = parseCrl(der);
    expect(crl.signatureAlgorithm.algorithm).toBe('1.2.840.113549.1.1.10');
    expect(await verifies({ ...ca, key }, der)).toBe(true);
    expect(AsnConvert.serialize(crl.signatureAlgorithm).byteLength).toBeGreaterThan(15);
  }, 60_000);
});
