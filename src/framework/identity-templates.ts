// Identity templates: `{{identity.entity.id}}` and friends, resolved per token against its
// identity. ACL path patterns use them (a pattern whose templates cannot all be resolved is
// skipped by the ACL), and so do the values of AWS session tags.

export interface IdentityContext {
  entity?: {
    id: string;
    name: string;
    metadata: Record<string, string>;
    aliases: {
      mountAccessor: string;
      id: string;
      name: string;
      metadata: Record<string, string>;
      customMetadata: Record<string, string>;
    }[];
  };
  groups: { id: string; name: string }[];
}

export type TemplatePart = { literal: string } | { expr: string };

export type TemplateScan = { ok: true; parts: TemplatePart[] } | { ok: false; error: string };

/** Splits a pattern into literal text and `{{ ... }}` expressions (expression text untrimmed). */
export function scanTemplate(pattern: string): TemplateScan {
  const parts: TemplatePart[] = [];
  let rest = pattern;
  for (;;) {
    const open = rest.indexOf('{{');
    const close = rest.indexOf('}}');
    if (open < 0) {
      if (close >= 0) return { ok: false, error: 'unbalanced template braces: "}}" without "{{"' };
      if (rest) parts.push({ literal: rest });
      return { ok: true, parts };
    }
    if (close >= 0 && close < open) return { ok: false, error: 'unbalanced template braces: "}}" without "{{"' };
    const end = rest.indexOf('}}', open + 2);
    if (end < 0) return { ok: false, error: 'unbalanced template braces: "{{" without "}}"' };
    const expr = rest.slice(open + 2, end);
    if (expr.includes('{{')) return { ok: false, error: 'unbalanced template braces: nested "{{"' };
    if (open > 0) parts.push({ literal: rest.slice(0, open) });
    parts.push({ expr });
    rest = rest.slice(end + 2);
  }
}

export const hasTemplate = (pattern: string): boolean => pattern.includes('{{') || pattern.includes('}}');

type Entity = NonNullable<IdentityContext['entity']>;

/** A parsed selector: how to read its value from an identity (undefined = not available). */
type Selector = (identity: IdentityContext) => string | undefined;

const lookup = (map: Record<string, string> | undefined, key: string): string | undefined =>
  map && Object.hasOwn(map, key) ? map[key] : undefined;

/** Splits "<head>.<field>" at the last dot, for ids/names that are followed by a fixed field. */
function splitLast(s: string, field: string): string | null {
  const suffix = `.${field}`;
  return s.endsWith(suffix) && s.length > suffix.length ? s.slice(0, -suffix.length) : null;
}

function aliasSelector(rest: string): Selector | null {
  const dot = rest.indexOf('.');
  if (dot <= 0) return null;
  const accessor = rest.slice(0, dot);
  const field = rest.slice(dot + 1);
  const alias = (e: Entity | undefined) => e?.aliases.find((a) => a.mountAccessor === accessor);
  if (field === 'id') return (i) => alias(i.entity)?.id;
  if (field === 'name') return (i) => alias(i.entity)?.name;
  for (const [prefix, pick] of [
    ['metadata.', (a: Entity['aliases'][number]) => a.metadata],
    ['custom_metadata.', (a: Entity['aliases'][number]) => a.customMetadata],
  ] as const) {
    const key = field.startsWith(prefix) ? field.slice(prefix.length) : '';
    if (key) return (i) => {
      const a = alias(i.entity);
      return a ? lookup(pick(a), key) : undefined;
    };
  }
  return null;
}

/** Parses a trimmed template expression; null when it is not a known ACL template. */
function parseSelector(expr: string): Selector | null {
  if (expr === 'identity.entity.id') return (i) => i.entity?.id;
  if (expr === 'identity.entity.name') return (i) => i.entity?.name;
  const startsWith = (p: string) => (expr.startsWith(p) ? expr.slice(p.length) : null);
  const metaKey = startsWith('identity.entity.metadata.');
  if (metaKey) return (i) => lookup(i.entity?.metadata, metaKey);
  const aliasRest = startsWith('identity.entity.aliases.');
  if (aliasRest) return aliasSelector(aliasRest);
  const groupId = splitLast(startsWith('identity.groups.ids.') ?? '', 'name');
  if (groupId) return (i) => i.groups?.find((g) => g.id === groupId)?.name;
  const groupName = splitLast(startsWith('identity.groups.names.') ?? '', 'id');
  if (groupName) return (i) => i.groups?.find((g) => g.name === groupName)?.id;
  return null;
}

/** A problem with a pattern's templates (for policy validation), or null when they are fine. */
export function templateProblem(pattern: string): string | null {
  const scan = scanTemplate(pattern);
  if (!scan.ok) return scan.error;
  for (const part of scan.parts) {
    if ('expr' in part && !parseSelector(part.expr.trim())) return `unknown template "{{${part.expr}}}"`;
  }
  return null;
}

/**
 * A resolved value must stay one literal piece of a segment. Identity values are often
 * user-controlled (entity names, metadata), so anything that could turn into a glob, a segment
 * wildcard, another segment or a traversal is refused, as is an empty value (which would turn
 * `foo/{{x}}*` into `foo/*`).
 */
const isSafeValue = (v: string): boolean =>
  v !== '' && !/[*+/]/.test(v) && !v.includes('..') && !v.includes('{{') && !v.includes('}}');

/** Resolves every {{...}} in a pattern, or returns null when any cannot be resolved (the rule is then skipped). */
export const resolveTemplate = (pattern: string, identity: IdentityContext | undefined): string | null => resolve(pattern, identity, isSafeValue);

/** Resolves every {{...}} in a text, any value allowed; null when one cannot be resolved. */
export const resolveTemplateText = (text: string, identity: IdentityContext | undefined): string | null => resolve(text, identity, () => true);

function resolve(pattern: string, identity: IdentityContext | undefined, acceptable: (value: string) => boolean): string | null {
  const scan = scanTemplate(pattern);
  if (!scan.ok) return null;
  let out = '';
  for (const part of scan.parts) {
    if ('literal' in part) {
      out += part.literal;
      continue;
    }
    const selector = parseSelector(part.expr.trim());
    const value = selector && identity ? selector(identity) : undefined;
    if (value === undefined || !acceptable(value)) return null;
    out += value;
  }
  return out;
}
