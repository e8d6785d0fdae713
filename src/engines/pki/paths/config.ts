// Engine-wide PKI configuration (reference §1.7, §1.13): config/issuers and its root/replace alias,
// config/keys, config/urls and config/cluster; plus the AIA URL checks and templating that issuer
// updates and CA generation share.

import type { LogicalRequest, PathDef } from '../../../framework/backend';
import { asCofferError, badRequest, CofferError, notFound } from '../../../framework/errors';
import type { FieldData } from '../../../framework/fields';
import type { Storage } from '../../../framework/storage';
import {
  clusterConfig,
  emptyAia,
  issuersConfig,
  keysConfig,
  listIssuerIds,
  loadIssuer,
  resolveIssuerRef,
  resolveKeyRef,
  saveClusterConfig,
  saveIssuer,
  saveIssuersConfig,
  saveKeysConfig,
  saveUrlsConfig,
  storedUrlsConfig,
  type AiaUrls,
  type IssuerEntry,
} from '../store';

// ---- AIA URLs ----

const TEMPLATE_MARKERS = ['{{issuer_id}}', '{{cluster_path}}', '{{cluster_aia_path}}'];

/** Vault's URL check for AIA values: an absolute URL (a bare host:port gets http://) or a dotted path. */
export function isAiaUrl(s: string): boolean {
  if (s === '' || [...s].length >= 2083 || s.length <= 3 || s.startsWith('.') || /\s/.test(s)) return false;
  const t = s.includes(':') && !s.includes('://') ? `http://${s}` : s;
  if (t.startsWith('/')) return t.includes('.');
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(t)) return false;
  let u: URL;
  try {
    u = new URL(t);
  } catch {
    return false;
  }
  if (u.host.startsWith('.')) return false;
  return !(u.host === '' && u.pathname !== '' && !u.pathname.includes('.'));
}

/** The first value that is not a plain URL (templates count as invalid here), or ''. */
export function firstBadUrl(urls: string[]): string {
  return urls.find((u) => !isAiaUrl(u) || TEMPLATE_MARKERS.some((m) => u.includes(m))) ?? '';
}

export const AIA_LISTS = [
  ['issuing_certificates', 'issuingCertificates'],
  ['crl_distribution_points', 'crlDistributionPoints'],
  ['delta_crl_distribution_points', 'deltaCrlDistributionPoints'],
  ['ocsp_servers', 'ocspServers'],
] as const;

export const aiaEmpty = (a: AiaUrls): boolean => AIA_LISTS.every(([, k]) => a[k].length === 0);

/** Refuses an AIA list holding a non-URL, unless templating is on (checked at issuance then). */
export function checkAiaUrls(a: AiaUrls): void {
  if (a.enableTemplating) return;
  for (const [field, k] of AIA_LISTS) {
    const bad = firstBadUrl(a[k]);
    if (bad) throw badRequest(`invalid URL found in Authority Information Access (AIA) parameter ${field}: ${bad}`);
  }
}

/**
 * The URLs to put in a certificate: templates filled with the issuer id and the cluster-local
 * addresses. Throws a 400 with Vault's text when a template cannot be filled or gives a non-URL.
 */
export async function templateAia(storage: Storage, issuerId: string, a: AiaUrls): Promise<AiaUrls> {
  const out: AiaUrls = { ...emptyAia(), enableTemplating: a.enableTemplating };
  for (const [, k] of AIA_LISTS) out[k] = [...a[k]];
  if (!a.enableTemplating || aiaEmpty(a)) return out;
  const cluster = await clusterConfig(storage);
  for (const [field, k] of AIA_LISTS) {
    out[k] = a[k].map((uri) => {
      if (uri.includes('{{cluster_path}}') && !cluster.path) {
        throw badRequest('unable to template AIA URLs as we lack local cluster address information (path)');
      }
      if (uri.includes('{{cluster_aia_path}}') && !cluster.aiaPath) {
        throw badRequest('unable to template AIA URLs as we lack local cluster address information (aia_path)');
      }
      if (uri.includes('{{issuer_id}}') && !issuerId) {
        throw badRequest('unable to template AIA URLs as we lack an issuer_id for this operation');
      }
      return uri.replaceAll('{{cluster_path}}', cluster.path).replaceAll('{{cluster_aia_path}}', cluster.aiaPath).replaceAll('{{issuer_id}}', issuerId);
    });
    const bad = firstBadUrl(out[k]);
    if (bad) throw badRequest(`error validating templated ${field}; invalid URI: ${bad}`);
  }
  return out;
}

/** Vault's warning when templated URLs would make issuance fail (e.g. no cluster path yet). */
export async function templatingWarning(storage: Storage, issuerId: string, a: AiaUrls): Promise<string | null> {
  try {
    await templateAia(storage, issuerId, a);
    return null;
  } catch (e) {
    e = asCofferError(e);
    if (!(e instanceof CofferError)) throw e;
    return `issuance may fail: ${e.errors[0]}\n\nConsider setting the cluster-local address if it is not already set.`;
  }
}

export const NO_AIA_WARNING =
  "This mount hasn't configured any authority information access (AIA) fields; this may make it harder for systems to find missing certificates in the chain or to validate revocation status of certificates. Consider updating /config/urls or the newly generated issuer with this information.";

// ---- defaults ----

/**
 * Makes `id` the default issuer. The issuer's Last-Modified moves too, so `ca` readers holding a
 * copy of the previous default see a change.
 */
export async function setDefaultIssuer(storage: Storage, id: string, follow?: boolean): Promise<void> {
  const cfg = await issuersConfig(storage);
  await saveIssuersConfig(storage, { default: id, defaultFollowsLatestIssuer: follow ?? cfg.defaultFollowsLatestIssuer });
  const e = id ? await loadIssuer(storage, id) : null;
  if (e && cfg.default !== id) await saveIssuer(storage, { ...e, lastModified: Date.now() });
}

/** Whether a default issuer is configured and still exists. */
export async function hasDefaultIssuer(storage: Storage): Promise<boolean> {
  const { default: id } = await issuersConfig(storage);
  return id !== '' && (await loadIssuer(storage, id)) !== null;
}

// ---- handlers ----

const NO_KEY_WARNING =
  'This selected default issuer has no key associated with it. Some operations like issuing certificates and signing CRLs will be unavailable with the requested default issuer until a key is imported or the default issuer is changed.';

async function readIssuersConfig(req: LogicalRequest) {
  const cfg = await issuersConfig(req.storage);
  return { data: { default: cfg.default, default_follows_latest_issuer: cfg.defaultFollowsLatestIssuer } };
}

async function writeIssuersConfig(req: LogicalRequest, f: FieldData) {
  const ref = f.get<string>('default').trim();
  if (ref === '' || ref.toLowerCase() === 'default') throw badRequest("Invalid issuer specification; must be non-empty and can't be 'default'.");
  let entry: IssuerEntry;
  try {
    entry = await resolveIssuerRef(req.storage, ref);
  } catch (e) {
    e = asCofferError(e);
    if (e instanceof CofferError && e.status === 400) throw badRequest(`Error resolving issuer reference: ${e.errors[0]}`);
    throw e;
  }
  const follow = f.has('default_follows_latest_issuer') ? f.get<boolean>('default_follows_latest_issuer') : undefined;
  await setDefaultIssuer(req.storage, entry.id, follow);
  const cfg = await issuersConfig(req.storage);
  return {
    data: { default: cfg.default, default_follows_latest_issuer: cfg.defaultFollowsLatestIssuer },
    ...(entry.keyId ? {} : { warnings: [NO_KEY_WARNING] }),
  };
}

async function writeKeysConfig(req: LogicalRequest, f: FieldData) {
  const ref = f.get<string>('default').trim();
  if (ref === '' || ref.toLowerCase() === 'default') throw badRequest("Invalid key specification; must be non-empty and can't be 'default'.");
  let id: string;
  try {
    id = (await resolveKeyRef(req.storage, ref)).id;
  } catch (e) {
    e = asCofferError(e);
    if (e instanceof CofferError && e.status === 400) throw badRequest(`Error resolving issuer reference: ${e.errors[0]}`);
    throw e;
  }
  await saveKeysConfig(req.storage, { default: id });
  return { data: { default: id } };
}

const urlsData = (a: AiaUrls) => ({
  issuing_certificates: a.issuingCertificates,
  crl_distribution_points: a.crlDistributionPoints,
  delta_crl_distribution_points: a.deltaCrlDistributionPoints,
  ocsp_servers: a.ocspServers,
  enable_templating: a.enableTemplating,
});

async function writeUrls(req: LogicalRequest, f: FieldData) {
  const next: AiaUrls = { ...emptyAia(), ...((await storedUrlsConfig(req.storage)) ?? {}) };
  for (const [field, k] of AIA_LISTS) if (f.has(field)) next[k] = f.get<string[]>(field);
  if (f.has('enable_templating')) next.enableTemplating = f.get<boolean>('enable_templating');
  checkAiaUrls(next);
  const warnings: string[] = [];
  if (next.enableTemplating) {
    // As Vault: try the templates against one existing issuer, and warn (not fail) if they cannot be filled.
    const [first] = await listIssuerIds(req.storage);
    const w = first ? await templatingWarning(req.storage, first, next) : null;
    if (w) warnings.push(w);
  }
  await saveUrlsConfig(req.storage, next);
  return { data: urlsData(next), ...(warnings.length ? { warnings } : {}) };
}

async function writeCluster(req: LogicalRequest, f: FieldData) {
  const cfg = await clusterConfig(req.storage);
  if (f.has('path')) {
    cfg.path = f.get<string>('path');
    if (!isAiaUrl(cfg.path)) throw badRequest(`invalid, non-URL path given to cluster: ${cfg.path}`);
  }
  if (f.has('aia_path')) {
    cfg.aiaPath = f.get<string>('aia_path');
    if (!isAiaUrl(cfg.aiaPath)) throw badRequest(`invalid, non-URL aia_path given to cluster: ${cfg.aiaPath}`);
  }
  await saveClusterConfig(req.storage, cfg);
  return { data: { path: cfg.path, aia_path: cfg.aiaPath } };
}

export function configPaths(): PathDef[] {
  const aiaFields = {
    issuing_certificates: { type: 'comma-string-list', description: 'Issuing certificate (AIA caIssuers) URLs' },
    crl_distribution_points: { type: 'comma-string-list', description: 'CRL distribution point URLs' },
    delta_crl_distribution_points: { type: 'comma-string-list', description: 'Delta CRL (Freshest CRL) distribution point URLs' },
    ocsp_servers: { type: 'comma-string-list', description: 'OCSP responder URLs' },
    enable_templating: { type: 'bool', description: 'Fill {{issuer_id}}, {{cluster_path}} and {{cluster_aia_path}} in the URLs' },
  } as const;
  return [
    {
      pattern: 'config/issuers',
      fields: {
        default: { type: 'string', description: 'Reference (name or id) of the default issuer' },
        default_follows_latest_issuer: { type: 'bool', description: 'Make each new root or imported issuer the default' },
      },
      summary: 'Read or set the default issuer.',
      operations: { read: readIssuersConfig, update: writeIssuersConfig },
    },
    {
      pattern: 'root/replace',
      fields: { default: { type: 'string', description: 'Reference of the new default issuer', default: 'next' } },
      summary: 'Make another issuer (by default the one named "next") the default.',
      operations: { update: writeIssuersConfig },
    },
    {
      pattern: 'config/keys',
      fields: { default: { type: 'string', description: 'Reference (name or id) of the default key' } },
      summary: 'Read or set the default key.',
      operations: {
        read: async (req) => ({ data: { default: (await keysConfig(req.storage)).default } }),
        update: writeKeysConfig,
      },
    },
    {
      pattern: 'config/urls',
      fields: aiaFields,
      summary: 'The mount-wide AIA URLs put in issued certificates.',
      operations: {
        read: async (req) => {
          const cfg = await storedUrlsConfig(req.storage);
          if (!cfg) throw notFound();
          return { data: urlsData({ ...emptyAia(), ...cfg }) };
        },
        update: writeUrls,
      },
    },
    {
      pattern: 'config/cluster',
      fields: {
        path: { type: 'string', description: "This mount's URL on this cluster ({{cluster_path}})" },
        aia_path: { type: 'string', description: "This mount's AIA distribution URL ({{cluster_aia_path}})" },
      },
      summary: 'Cluster-local addresses used by AIA templating.',
      operations: {
        read: async (req) => {
          const cfg = await clusterConfig(req.storage);
          return { data: { path: cfg.path, aia_path: cfg.aiaPath } };
        },
        update: writeCluster,
      },
    },
  ];
}
