// The audit device table (sys/audit), kept by the SystemObject behind the barrier. Each device
// lives in its own object (addressed by the device's uuid), which holds its salt and its chain;
// the table only says which devices exist. Changes are serialised by the SystemObject's write
// mutex, which every sys/ write holds.

import { randomUUID } from '../../crypto/random';
import { badRequest } from '../../framework/errors';
import { getJSON, putJSON, type Storage } from '../../framework/storage';
import type { AuditDeviceRef } from './broker';
import type { ChainHead } from './chain';
import { parseDeviceOptions, type DeviceOptions } from './options';

const TABLE_KEY = 'core/audit-devices';

export interface AuditDeviceEntry {
  /** "file/": the path under sys/audit, with a trailing slash. */
  path: string;
  type: string;
  description: string;
  /** As the operator gave them (Vault lists them back unchanged). */
  options: Record<string, string>;
  local: boolean;
  uuid: string;
}

export interface EnableAuditParams {
  type: string;
  description: string;
  options: Record<string, string>;
  local: boolean;
}

export interface AuditTablePorts {
  /** Prepares the device's object: its options, a new salt and an empty chain. */
  provision(uuid: string, options: DeviceOptions): Promise<void>;
  /** Erases the device's object: salt and chain head. */
  destroy(uuid: string): Promise<void>;
  /** Tells every hosting object that the device list changed. */
  changed(): Promise<void>;
  head(uuid: string): Promise<ChainHead | null>;
  hash(uuid: string, input: string): Promise<string>;
}

/** "file", "/file/", "a/b" → "file/", "a/b/"; refuses anything ambiguous. */
export function normalizeAuditPath(raw: string): string {
  const p = raw.replace(/^\/+/, '').replace(/\/+$/, '');
  if (p === '') throw badRequest('backend path must be specified');
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.' || seg === '..') throw badRequest(`invalid audit path "${raw}": empty, "." and ".." segments are not allowed`);
    if (/[\u0000-\u0020\u007f*+]/.test(seg)) throw badRequest(`invalid audit path "${raw}": contains a control character, space, "*" or "+"`);
  }
  return `${p}/`;
}

export class AuditTable {
  constructor(
    private readonly storage: Storage,
    private readonly ports: AuditTablePorts,
  ) {}

  async list(): Promise<AuditDeviceEntry[]> {
    return (await getJSON<AuditDeviceEntry[]>(this.storage, TABLE_KEY)) ?? [];
  }

  async refs(): Promise<AuditDeviceRef[]> {
    return (await this.list()).map((e) => ({ uuid: e.uuid, path: e.path }));
  }

  /** Enables a device; returns warnings. Nothing is written when the input is refused. */
  async enable(rawPath: string, params: EnableAuditParams): Promise<string[]> {
    const path = normalizeAuditPath(rawPath);
    const { options, warnings } = parseDeviceOptions(params.type, params.options);
    const entries = await this.list();
    // Devices may not nest, as in Vault: "a/" and "a/b/" would be ambiguous in sys/audit-hash.
    if (entries.some((e) => e.path.startsWith(path) || path.startsWith(e.path))) throw badRequest('path already in use');
    const entry: AuditDeviceEntry = { path, type: params.type, description: params.description, options: params.options, local: params.local, uuid: randomUUID() };
    await this.ports.provision(entry.uuid, options);
    await putJSON(this.storage, TABLE_KEY, [...entries, entry]);
    await this.ports.changed();
    return warnings;
  }

  /** Disables a device; false when there was none at the path (Vault answers success anyway). */
  async disable(rawPath: string): Promise<boolean> {
    const path = normalizeAuditPath(rawPath);
    const entries = await this.list();
    const entry = entries.find((e) => e.path === path);
    if (!entry) return false;
    await putJSON(this.storage, TABLE_KEY, entries.filter((e) => e !== entry));
    // Hosting objects stop sending first; then the salt and chain are destroyed.
    await this.ports.changed();
    await this.ports.destroy(entry.uuid);
    return true;
  }

  /** GET sys/audit: each device by its path, with its chain head (beyond Vault). */
  async listing(): Promise<Record<string, unknown>> {
    const entries = await this.list();
    // A device whose object cannot answer is still listed, without a head.
    const heads = await Promise.all(entries.map((e) => this.ports.head(e.uuid).catch(() => null)));
    const out: Record<string, unknown> = {};
    entries.forEach((e, i) => {
      const head = heads[i];
      out[e.path] = {
        type: e.type,
        description: e.description,
        options: e.options,
        local: e.local,
        path: e.path,
        ...(head ? { chain_head: { device: e.uuid, seq: head.seq, hash: head.hash } } : {}),
      };
    });
    return out;
  }

  async hash(rawPath: string, input: string): Promise<string> {
    const path = normalizeAuditPath(rawPath);
    const entry = (await this.list()).find((e) => e.path === path);
    if (!entry) throw badRequest(`unknown audit backend ${JSON.stringify(path)}`);
    return this.ports.hash(entry.uuid, input);
  }
}
