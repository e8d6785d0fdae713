// Plugin versions: semantic versions as Vault's catalog takes them (hashicorp/go-version's
// NewSemver: an optional "v", one to three numeric segments, a pre-release and build metadata),
// kept in one canonical form, "v<major>.<minor>.<patch>[-pre][+meta]", so "1.2" and "v1.2.0"
// name the same catalog entry.

import { badRequest } from '../../framework/errors';

const SEMVER = /^v?(\d+(?:\.\d+){0,2})(?:-([0-9A-Za-z~-]+(?:\.[0-9A-Za-z~-]+)*))?(?:\+([0-9A-Za-z~-]+(?:\.[0-9A-Za-z~-]+)*))?$/;

interface Parsed {
  segments: [number, number, number];
  pre: string;
  meta: string;
}

function parse(raw: string): Parsed | null {
  const m = SEMVER.exec(raw);
  if (!m) return null;
  const parts = m[1].split('.');
  // Segments are 64-bit integers in go-version; longer digit strings do not parse there either.
  if (parts.some((p) => p.length > 18)) return null;
  const n = parts.map((p) => Number(p));
  return { segments: [n[0], n[1] ?? 0, n[2] ?? 0], pre: m[2] ?? '', meta: m[3] ?? '' };
}

const format = (p: Parsed): string => `v${p.segments.join('.')}${p.pre ? `-${p.pre}` : ''}${p.meta ? `+${p.meta}` : ''}`;

/**
 * The canonical form of a version given by a client ("" stays ""); a 400 with Vault's message
 * when it is not a semantic version.
 */
export function canonicalVersion(raw: string): string {
  if (raw === '') return '';
  const p = parse(raw);
  if (!p) throw badRequest(`version ${JSON.stringify(raw)} is not a valid semantic version: Malformed version: ${raw}`);
  return format(p);
}

/** Versions whose build metadata is "builtin" or "builtin.*" name compiled-in plugins (Vault's rule). */
export function isBuiltinVersion(version: string): boolean {
  const meta = parse(version)?.meta ?? '';
  return meta === 'builtin' || meta.startsWith('builtin.');
}

function comparePre(a: string, b: string): number {
  if (a === b) return 0;
  if (a === '') return 1; // a release sorts after its pre-releases
  if (b === '') return -1;
  const x = a.split('.');
  const y = b.split('.');
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const xn = /^\d+$/.test(x[i]);
    const yn = /^\d+$/.test(y[i]);
    if (xn && yn && Number(x[i]) !== Number(y[i])) return Number(x[i]) - Number(y[i]);
    if (xn !== yn) return xn ? -1 : 1;
    if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
  }
  return x.length - y.length;
}

/** Orders versions oldest first; "" (unversioned) before any version. */
export function compareVersions(a: string, b: string): number {
  const pa = parse(a);
  const pb = parse(b);
  if (!pa || !pb) return pa ? 1 : pb ? -1 : a < b ? -1 : a > b ? 1 : 0;
  for (let i = 0; i < 3; i++) if (pa.segments[i] !== pb.segments[i]) return pa.segments[i] - pb.segments[i];
  return comparePre(pa.pre, pb.pre) || (a < b ? -1 : a > b ? 1 : 0);
}
