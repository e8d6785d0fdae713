// The read of a managed_key key: transit's usual key view, with each version's managed key (its
// current name, UUID and the public key of the version) and what the latest one can do, from its
// usages and its key type (RSA signs and encrypts, ECDSA only signs). A managed key the mount may no
// longer use (or that was deleted) still shows its UUID, with an empty name and no capabilities.

import { formatRFC3339Nano } from '../../../framework/duration';
import type { ResolvedManagedKey } from '../../../managed-keys/access';
import type { KeyUsage } from '../../../managed-keys/types';
import type { KeyPolicy } from '../policy';
import { keyView } from '../view';
import { managedOf, type ManagedUse } from './access';
import { isRsaKey, versionPublicKey } from './public-key';

export async function managedKeyView(use: ManagedUse, p: KeyPolicy): Promise<Record<string, unknown>> {
  const out = await keyView(p);
  // Versions often share a managed key: each is looked up once.
  const found = new Map<string, ResolvedManagedKey | null>();
  const keys: Record<string, unknown> = {};
  for (const [n, v] of [...p.versions].sort((a, b) => a[0] - b[0])) {
    const mv = managedOf(v);
    if (!found.has(mv.id)) found.set(mv.id, use.available ? await use.lookup(mv.id) : null);
    const name = found.get(mv.id)?.entry.name ?? '';
    keys[n] = { creation_time: formatRFC3339Nano(v.created), name, managed_key_id: mv.id, public_key: mv.publicKeyPem };
  }
  out.keys = keys;
  const latest = p.versions.get(p.latestVersion)?.managed;
  const current = latest ? found.get(latest.id) : null;
  const rsa = latest ? isRsaKey(await versionPublicKey(latest)) : false;
  const can = (u: KeyUsage) => current?.entry.usages.includes(u) ?? false;
  Object.assign(out, {
    supports_encryption: rsa && can('encrypt'),
    supports_decryption: rsa && can('decrypt'),
    supports_signing: can('sign'),
    supports_verification: can('verify'),
    supports_derivation: false,
    managed_key_name: current?.entry.name ?? '',
    managed_key_id: latest?.id ?? '',
  });
  return out;
}
