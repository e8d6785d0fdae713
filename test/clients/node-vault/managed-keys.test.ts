// node-vault against sys/managed-keys (no HSM here: configuration, listing, reading and the
// refusals; test/sign through a real bridge is in test/e2e/launcher-hsm.test.ts), with its
// generic write/read/list/delete and its mount methods, JSON nulls included.
import { describe, expect, it } from 'vitest';
import { failure, unique, vault } from './client';

const root = vault();

describe('sys/managed-keys', () => {
  it('writes, reads (secrets redacted), lists under both type names, and deletes', async () => {
    const name = unique('hsm');
    await root.write(`sys/managed-keys/pkcs11/${name}`, {
      library: 'softhsm',
      token_label: 'coffer',
      pin: '1234-secret',
      key_label: name,
      mechanism: '0x1041',
      curve: 'P256',
      allow_generate_key: 'true',
      // A JSON null is the field's zero value, as in Vault.
      slot: null,
    });
    const read = (await root.read(`sys/managed-keys/pkcs11/${name}`)).data;
    expect(read).toMatchObject({ name, type: 'pkcs11', pin: 'redacted', mechanism: 0x1041, allow_generate_key: true, any_mount: false });
    expect(read.UUID).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.stringify(read)).not.toContain('1234-secret');
    expect((await root.list('sys/managed-keys/pkcs11')).data.keys).toContain(name);

    const cloud = unique('kms');
    await root.write(`sys/managed-keys/awskms/${cloud}`, { access_key: 'AKIAEXAMPLE', secret_key: 'kms-secret', kms_key: 'alias/coffer', key_type: 'RSA', key_bits: '2048' });
    expect((await root.read(`sys/managed-keys/cloudakms/${cloud}`)).data).toMatchObject({ name: cloud, secret_key: 'redacted' });
    expect((await root.list('sys/managed-keys/awskms')).data.keys).toContain(cloud);

    await root.delete(`sys/managed-keys/pkcs11/${name}`);
    expect((await failure(root.read(`sys/managed-keys/pkcs11/${name}`))).status).toBe(404);
  });

  it('refuses a bad field with a 400 that stores nothing, and deleting a key a mount lists', async () => {
    const name = unique('hsm');
    const bad = await failure(root.write(`sys/managed-keys/pkcs11/${name}`, { library: 'softhsm', slot: '0', pin: '1', key_label: 'k', mechanism: 'sign please' }));
    expect(bad.status).toBe(400);
    expect((await failure(root.read(`sys/managed-keys/pkcs11/${name}`))).status).toBe(404);

    await root.write(`sys/managed-keys/pkcs11/${name}`, { library: 'softhsm', slot: '0', pin: '1', key_label: 'k', mechanism: '0x0001', key_bits: 2048 });
    const mount = unique('transit');
    await root.mount({ mount_point: mount, type: 'transit', config: { allowed_managed_keys: [name] } });
    const refused = await failure(root.delete(`sys/managed-keys/pkcs11/${name}`));
    expect(refused.status).toBe(400);
    expect(refused.errors[0]).toContain(mount);
    await root.unmount({ mount_point: mount });
    await root.delete(`sys/managed-keys/pkcs11/${name}`);
  });
});
