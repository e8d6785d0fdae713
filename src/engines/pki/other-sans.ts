// Other SANs as Vault's roles and requests give them: `<oid>;UTF8:<value>`.

/** `<oid>;UTF8:<value>` entries grouped by OID (values in order); throws with Vault's message. */
export function parseOtherSans(list: readonly string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const other of list) {
    const semi = other.indexOf(';');
    if (semi < 0) throw new Error(`expected a semicolon in other SAN ${JSON.stringify(other)}`);
    const oid = other.slice(0, semi);
    const rest = other.slice(semi + 1);
    const colon = rest.indexOf(':');
    if (colon < 0) throw new Error(`expected a colon in other SAN ${JSON.stringify(other)}`);
    const type = rest.slice(0, colon).toLowerCase();
    if (type !== 'utf8' && type !== 'utf-8') {
      throw new Error(`only utf8 other SANs are supported; found non-supported type in other SAN ${JSON.stringify(other)}`);
    }
    const values = out.get(oid) ?? [];
    values.push(rest.slice(colon + 1));
    out.set(oid, values);
  }
  return out;
}
