// CA chains of a mount's issuers (reference §1.6, spec "manual_chain"): an issuer, then every
// parent found among the mount's issuers (subject = child's issuer DN and a verified signature),
// each followed by its own chain. Roots come before cross-signed parents so a straight chain ends
// at a trust anchor first. A non-empty manual_chain is used as given (deleted entries skipped).

import { bytesEqual } from '../../crypto/encoding';
import { parseCertificate, verifySignedBy, type ParsedCert } from '../../crypto/pki/certificate';
import type { IssuerEntry } from './store';

/** Parses each issuer certificate once per chain build. */
class Graph {
  private readonly parsed = new Map<string, ParsedCert>();
  private readonly parents = new Map<string, IssuerEntry[]>();
  private readonly selfSigned = new Map<string, boolean>();
  readonly byId: Map<string, IssuerEntry>;

  constructor(readonly all: IssuerEntry[]) {
    this.byId = new Map(all.map((e) => [e.id, e]));
  }

  cert(e: IssuerEntry): ParsedCert {
    let c = this.parsed.get(e.id);
    if (!c) {
      c = parseCertificate(e.certificate);
      this.parsed.set(e.id, c);
    }
    return c;
  }

  async isSelfSigned(e: IssuerEntry): Promise<boolean> {
    let v = this.selfSigned.get(e.id);
    if (v === undefined) {
      const c = this.cert(e);
      v = c.selfIssued && (await verifySignedBy(c, c.spki));
      this.selfSigned.set(e.id, v);
    }
    return v;
  }

  /** Issuers (other than `e` itself) whose subject is e's issuer and whose key signed e. */
  async parentsOf(e: IssuerEntry): Promise<IssuerEntry[]> {
    const known = this.parents.get(e.id);
    if (known) return known;
    const child = this.cert(e);
    const found: IssuerEntry[] = [];
    for (const p of this.all) {
      if (p.id === e.id) continue;
      const pc = this.cert(p);
      if (!bytesEqual(pc.subjectDer, child.issuerDer)) continue;
      if (await verifySignedBy(child, pc.spki)) found.push(p);
    }
    // Roots first (they end a chain), then a stable order by id (as Vault sorts, descending).
    const rank = new Map<string, number>();
    for (const p of found) rank.set(p.id, (await this.isSelfSigned(p)) ? 0 : 1);
    found.sort((a, b) => rank.get(a.id)! - rank.get(b.id)! || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    this.parents.set(e.id, found);
    return found;
  }
}

async function walk(g: Graph, e: IssuerEntry, out: IssuerEntry[], seen: Set<string>): Promise<void> {
  for (const p of await g.parentsOf(e)) {
    if (seen.has(p.id)) continue;
    if (p.manualChain && p.manualChain.length > 0) {
      // A parent with a manual chain contributes that chain as it stands.
      for (const id of p.manualChain) {
        const m = g.byId.get(id);
        if (m && !seen.has(m.id)) {
          seen.add(m.id);
          out.push(m);
        }
      }
      continue;
    }
    seen.add(p.id);
    out.push(p);
    await walk(g, p, out, seen);
  }
}

/** The chain of `issuer` among `all`: the issuer first, then its parents up to the roots. */
export async function buildChain(all: IssuerEntry[], issuer: IssuerEntry): Promise<IssuerEntry[]> {
  const pool = all.some((e) => e.id === issuer.id) ? all : [...all, issuer];
  const g = new Graph(pool);
  if (issuer.manualChain && issuer.manualChain.length > 0) {
    return issuer.manualChain.map((id) => (id === issuer.id ? issuer : g.byId.get(id))).filter((e): e is IssuerEntry => e !== undefined);
  }
  const out = [issuer];
  await walk(g, issuer, out, new Set([issuer.id]));
  return out;
}
