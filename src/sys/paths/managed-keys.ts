// sys/managed-keys: LIST :type, GET|POST|DELETE :type/:name, POST :type/:name/test/sign.
// Entries live in the SystemObject's storage (src/managed-keys/store.ts), written through the
// request's transaction. :type is a spec type or its Vault alias (src/managed-keys/entry.ts).
// These are restricted endpoints (root namespace only: the only one here). None of them is a sudo
// path (neither Vault's enterprise path stubs nor its published OpenAPI mark them sudo), so the
// ACL's capabilities on the path decide. DELETE of a missing key is a no-op (204), as Vault's
// deletes are; Vault's own refusal messages here are not published, so ours are our wording.

import { parseHashName, HASH_NAMES } from '../../crypto/transit/hashes';
import { randomUUID } from '../../crypto/random';
import { routePrefix } from '../../core/mounts/table';
import type { LogicalRequest, PathDef } from '../../framework/backend';
import { badRequest, CofferError, notFound } from '../../framework/errors';
import type { FieldData, FieldSchemas } from '../../framework/fields';
import { createBackend } from '../../managed-keys/backends';
import { ALL_BACKEND_FIELDS, buildEntry, canonicalType, entryView, GENERIC_FIELDS, requireType, typeLabel, validateName } from '../../managed-keys/entry';
import { testSign } from '../../managed-keys/self-test';
import { ManagedKeyStore } from '../../managed-keys/store';
import type { ManagedKeyEntry, ManagedKeyType } from '../../managed-keys/types';
import type { SystemServices } from '../context';

const pathFields: FieldSchemas = {
  type: { type: 'string', description: 'Backend type: pkcs11, cloudakms (awskms), cloudbkeyvault (azurekeyvault) or cloudckms (gcpckms).' },
  name: { type: 'string', description: 'The key name: lowercase, unique across types.' },
};

const keyFields: FieldSchemas = {
  ...pathFields,
  ...Object.fromEntries(Object.entries(GENERIC_FIELDS).map(([k, t]) => [k, { type: t, description: k === 'usages' ? 'Allowed usages (default sign,verify).' : 'Boolean (strings accepted), default false.' }])),
  // Converted per type in src/managed-keys/entry.ts (the same name may differ between types).
  ...Object.fromEntries(ALL_BACKEND_FIELDS.map((k) => [k, { type: 'any' as const, description: 'Backend field (see the type).' }])),
};

/** Does the stored entry answer at this path's type? (Aliases name the same stored type.) */
function atPath(entry: ManagedKeyEntry | null, type: ManagedKeyType): ManagedKeyEntry | null {
  return entry && entry.type === type ? entry : null;
}

export function managedKeyPaths(s: SystemServices): PathDef[] {
  const store = (req: LogicalRequest) => new ManagedKeyStore(req.storage);

  /** The mounts (secrets and auth) whose allowed_managed_keys lists `name`, as route prefixes. */
  const mountsListing = async (name: string): Promise<string[]> => {
    const entries = [...(await s.mounts.list('mounts')), ...(await s.mounts.list('auth'))];
    return entries.filter((e) => (e.config.allowed_managed_keys ?? []).includes(name)).map(routePrefix);
  };

  const write = async (req: LogicalRequest, f: FieldData) => {
    const type = requireType(f.get('type'));
    const name = validateName(f.get('name'));
    const keys = store(req);
    const existing = await keys.byName(name);
    if (existing && existing.type !== type) {
      throw badRequest(`managed key name ${JSON.stringify(name)} is already used by a ${typeLabel(existing.type)} key: names are unique across types`);
    }
    const raw = { ...req.data };
    delete raw.type;
    delete raw.name;
    await keys.put(buildEntry({ type, name, raw, previous: existing, newId: randomUUID }));
    await s.managedKeysChanged();
    return null;
  };

  const remove = async (req: LogicalRequest, f: FieldData) => {
    const type = requireType(f.get('type'));
    const name = f.get<string>('name');
    const keys = store(req);
    const existing = await keys.byName(name);
    if (!existing) return null;
    if (existing.type !== type) {
      throw badRequest(`managed key ${JSON.stringify(name)} is a ${typeLabel(existing.type)} key: delete it at sys/managed-keys/${existing.type}/${name}`);
    }
    const users = await mountsListing(name);
    if (users.length > 0) {
      throw badRequest(
        `cannot delete managed key ${JSON.stringify(name)}: it is listed in the allowed_managed_keys of ${users.length === 1 ? 'mount' : 'mounts'} ${users.join(', ')}; remove it there first (tune)`,
      );
    }
    await keys.delete(existing);
    await s.managedKeysChanged();
    return null;
  };

  const signTest = async (req: LogicalRequest, f: FieldData) => {
    const type = requireType(f.get('type'));
    const name = f.get<string>('name');
    const hashName = f.get<string>('hash_algorithm');
    const hash = parseHashName(hashName);
    if (!hash) throw badRequest(`unsupported hash_algorithm ${JSON.stringify(hashName)}: supported values are ${HASH_NAMES.join(', ')}`);
    const entry = atPath(await store(req).byName(name), type);
    if (!entry) throw new CofferError(404, [`no managed key found with name ${JSON.stringify(name)} of type ${typeLabel(type)}`]);
    await testSign(entry, createBackend(entry, s.managedKeyDeps), { hash, pss: f.get<boolean>('use_pss') });
    return null;
  };

  return [
    {
      pattern: 'managed-keys/(?<type>[^/]+)/?',
      fields: { type: pathFields.type },
      summary: 'List the managed keys of a type.',
      operations: {
        list: async (req, f) => {
          const keys = await store(req).names(requireType(f.get('type')));
          if (keys.length === 0) throw notFound();
          return { data: { keys } };
        },
      },
    },
    {
      pattern: 'managed-keys/(?<type>[^/]+)/(?<name>[^/]+)/test/sign',
      fields: {
        ...pathFields,
        use_pss: { type: 'bool', description: 'RSA keys: sign with PSS.' },
        hash_algorithm: { type: 'string', default: 'sha2-256', description: `Hash of the signed data: ${HASH_NAMES.join(', ')}.` },
      },
      summary: 'Sign and verify random data with a managed key (generates the key when allowed and missing).',
      operations: { update: async (req, f) => await signTest(req, f) },
    },
    {
      pattern: 'managed-keys/(?<type>[^/]+)/(?<name>[^/]+)',
      fields: keyFields,
      summary: 'Create, update, read or delete a managed key.',
      existenceCheck: async (req, f) => {
        // Runs before authorisation: an unknown type is simply "not there" (the handler says why).
        const type = canonicalType(f.get('type'));
        return type !== null && atPath(await store(req).byName(f.get('name')), type) !== null;
      },
      operations: {
        read: async (req, f) => {
          const type = requireType(f.get('type'));
          const entry = atPath(await store(req).byName(f.get('name')), type);
          if (!entry) throw notFound();
          return { data: entryView(entry, f.get('type')) };
        },
        // One handler for create and update (the pipeline then skips the existence check when the
        // caller may do both).
        update: async (req, f) => await write(req, f),
        delete: async (req, f) => await remove(req, f),
      },
    },
  ];
}
