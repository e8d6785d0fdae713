// What the emulator holds: Entra ID tenants with their app registrations (client id + secret), and
// Key Vault vaults (each in a tenant, under a key store DNS suffix, with an access policy) holding
// keys with their versions. Vault names are global, like the DNS names they are in Azure.
import { randomBytes } from 'node:crypto';
import { generate, type Material } from './crypto';
import { badParameter } from './errors';
import { Faults } from './faults';
import { KEY_PERMISSIONS, type CallRecord, type KeyPermission, type KeySpec, type TenantSpec, type TenantState, type VaultView } from './types';

export interface KeyVersion {
  version: string;
  kty: string;
  keySize?: number;
  crv?: string;
  keyOps: string[];
  enabled: boolean;
  created: number;
  updated: number;
  material: Material;
}

export class Vault {
  /** Key name (case-insensitive in Key Vault: kept lowercase here) → versions, oldest first. */
  readonly keys = new Map<string, KeyVersion[]>();
  constructor(
    readonly name: string,
    readonly tenant: Tenant,
    readonly resource: string,
    readonly access: Record<string, KeyPermission[]> | null,
  ) {}

  /** May this client do `perm`? Without an access policy, every client of the tenant may. */
  allows(clientId: string, perm: KeyPermission): boolean {
    return this.access === null || (this.access[clientId] ?? []).includes(perm);
  }

  versions(name: string): KeyVersion[] | undefined {
    return this.keys.get(name.toLowerCase());
  }
}

export class Tenant {
  readonly clients = new Map<string, string>();
  readonly vaults: Vault[] = [];
  readonly faults = new Faults();
  readonly tokensIssued = new Map<string, number>();
  calls: CallRecord[] = [];
  /** The uti claims of the tokens issued, and of those revoked (the vaults refuse them). */
  readonly issued: string[] = [];
  readonly revoked = new Set<string>();

  constructor(
    readonly id: string,
    readonly tokenLifetime: number,
  ) {}

  log(record: CallRecord): void {
    this.calls.push(record);
    if (this.calls.length > 20_000) this.calls = this.calls.slice(-10_000);
  }
}

export const DEFAULT_RESOURCE = 'vault.azure.net';

const RSA_SIZES = [2048, 3072, 4096];
const CURVES = ['P-256', 'P-384', 'P-521'];
const RSA_OPS = ['encrypt', 'decrypt', 'sign', 'verify', 'wrapKey', 'unwrapKey'];
const EC_OPS = ['sign', 'verify'];

export class Directory {
  readonly tenants = new Map<string, Tenant>();
  /** Lowercase vault name → vault. */
  readonly vaults = new Map<string, Vault>();

  /** `dir`: where key files for openssl are written. */
  constructor(readonly dir: string) {}

  /** Replaces a tenant (its clients, vaults, keys, calls and faults). */
  register(tenantId: string, spec: TenantSpec): Tenant {
    for (const v of spec.vaults ?? []) {
      const owner = this.vaults.get(v.name.toLowerCase());
      if (owner && owner.tenant.id !== tenantId) throw new Error(`vault ${v.name} belongs to tenant ${owner.tenant.id}`);
      for (const perms of Object.values(v.access ?? {})) {
        for (const p of perms) if (!(KEY_PERMISSIONS as readonly string[]).includes(p)) throw new Error(`unknown key permission ${p}`);
      }
    }
    this.remove(tenantId);
    const tenant = new Tenant(tenantId, spec.token_lifetime_s ?? 3599);
    for (const c of spec.clients ?? []) tenant.clients.set(c.client_id, c.client_secret);
    for (const v of spec.vaults ?? []) {
      const vault = new Vault(v.name.toLowerCase(), tenant, (v.resource ?? DEFAULT_RESOURCE).toLowerCase(), v.access ?? null);
      tenant.vaults.push(vault);
      this.vaults.set(vault.name, vault);
    }
    this.tenants.set(tenantId, tenant);
    return tenant;
  }

  remove(tenantId: string): void {
    const old = this.tenants.get(tenantId);
    if (!old) return;
    for (const v of old.vaults) this.vaults.delete(v.name);
    this.tenants.delete(tenantId);
  }

  /** Makes a new version of a key (REST create, or the control API). */
  async createKey(vault: Vault, name: string, spec: KeySpec): Promise<KeyVersion> {
    const kty = spec.kty;
    const rsa = kty === 'RSA' || kty === 'RSA-HSM';
    const ec = kty === 'EC' || kty === 'EC-HSM';
    if (!rsa && !ec) throw badParameter(`The key type (kty) ${JSON.stringify(kty)} is not valid for this vault: use RSA, RSA-HSM, EC or EC-HSM.`);
    const size = rsa ? (spec.key_size ?? 2048) : undefined;
    if (rsa && !RSA_SIZES.includes(size!)) throw badParameter(`The specified RSA key size (${spec.key_size}) is not supported. Supported sizes: 2048, 3072, 4096.`);
    if (ec && spec.key_size !== undefined) throw badParameter('key_size is not applicable to EC keys.');
    const crv = ec ? (spec.crv ?? 'P-256') : undefined;
    if (ec && !CURVES.includes(crv!)) throw badParameter(`The specified curve (${crv}) is not supported. Supported curves: P-256, P-384, P-521.`);
    if (rsa && spec.crv !== undefined) throw badParameter('crv is not applicable to RSA keys.');
    const allowed = rsa ? RSA_OPS : EC_OPS;
    const keyOps = spec.key_ops ?? allowed;
    for (const op of keyOps) if (!allowed.includes(op)) throw badParameter(`The key operation ${JSON.stringify(op)} is not valid for a ${kty} key.`);
    const material = await generate(this.dir, rsa ? 'rsa' : 'ec', rsa ? size! : crv!);
    const now = Math.floor(Date.now() / 1000);
    const version: KeyVersion = { version: randomBytes(16).toString('hex'), kty, keySize: size, crv, keyOps: [...keyOps], enabled: spec.enabled ?? true, created: now, updated: now, material };
    const list = vault.versions(name) ?? [];
    list.push(version);
    vault.keys.set(name.toLowerCase(), list);
    return version;
  }

  snapshot(tenant: Tenant, base: string): TenantState {
    return {
      tenant_id: tenant.id,
      client_ids: [...tenant.clients.keys()],
      tokens_issued: Object.fromEntries(tenant.tokensIssued),
      vaults: tenant.vaults.map(
        (v): VaultView => ({
          name: v.name,
          resource: v.resource,
          keys: Object.fromEntries(
            [...v.keys].map(([name, versions]) => [
              name,
              versions.map((k) => ({
                version: k.version,
                kid: `${base}/vaults/${v.name}/keys/${name}/${k.version}`,
                kty: k.kty,
                ...(k.keySize ? { key_size: k.keySize } : {}),
                ...(k.crv ? { crv: k.crv } : {}),
                key_ops: k.keyOps,
                enabled: k.enabled,
                created: k.created,
                public_key: k.material.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
              })),
            ]),
          ),
        }),
      ),
    };
  }
}
