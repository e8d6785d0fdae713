// Query API parameters: the form-encoded body (or query string) decoded into a flat map, and the
// awsQuery list encoding read back: `Prefix.member.N` for lists of strings and
// `Prefix.member.N.Field` for lists of structures (N counts from 1). The SDK sends `Prefix=` for
// an empty list, which reads as no members.

export type Params = Record<string, string>;

/** Decodes application/x-www-form-urlencoded text; a repeated name keeps its last value. */
export function decodeForm(text: string, into: Params = {}): Params {
  if (!text) return into;
  for (const [name, value] of new URLSearchParams(text)) into[name] = value;
  return into;
}

/** The N of every `<prefix>.member.N[.…]` name, ascending. */
function memberIndexes(params: Params, prefix: string): number[] {
  const head = `${prefix}.member.`;
  const seen = new Set<number>();
  for (const name of Object.keys(params)) {
    if (!name.startsWith(head)) continue;
    const n = Number(name.slice(head.length).split('.', 1)[0]);
    if (Number.isInteger(n) && n > 0) seen.add(n);
  }
  return [...seen].sort((a, b) => a - b);
}

/** `Prefix.member.N` values, in N order. */
export function memberList(params: Params, prefix: string): string[] {
  return memberIndexes(params, prefix)
    .map((n) => params[`${prefix}.member.${n}`])
    .filter((v): v is string => v !== undefined);
}

/** `Prefix.member.N.<field>` structures, in N order; absent fields are left out. */
export function memberStructs<F extends string>(params: Params, prefix: string, fields: readonly F[]): Partial<Record<F, string>>[] {
  return memberIndexes(params, prefix).map((n) => {
    const item: Partial<Record<F, string>> = {};
    for (const f of fields) {
      const v = params[`${prefix}.member.${n}.${f}`];
      if (v !== undefined) item[f] = v;
    }
    return item;
  });
}
