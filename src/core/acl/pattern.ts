// Path patterns: exact, trailing-`*` prefix globs and `+` segment wildcards, plus Vault's
// priority order for choosing the single rule that applies among several matching globs.
//
// `*` is special only as the last character; anywhere else it is a literal character. `+` is
// special only as a whole segment (policy validation refuses any other use).

export interface CompiledPattern {
  pattern: string;
  kind: 'exact' | 'prefix' | 'segment';
  /** For 'prefix': the pattern without its trailing `*`. */
  prefix: string;
  /** For 'segment': the pattern split on "/". */
  parts: string[];
  endsWithGlob: boolean;
  /** Offset of the first `+` segment, else of the trailing `*`; -1 for exact patterns. */
  firstWildcard: number;
  plusCount: number;
}

/** A problem with a (template-free) pattern, or null. */
export function patternProblem(pattern: string): string | null {
  if (pattern.includes('+*')) return 'invalid use of wildcards ("+*" is forbidden)';
  if (pattern.split('/').some((seg) => seg.includes('+') && seg !== '+')) {
    return '"+" must occupy a whole path segment';
  }
  return null;
}

export function compilePattern(pattern: string): CompiledPattern {
  const parts = pattern.split('/');
  const endsWithGlob = pattern.endsWith('*');
  let firstPlus = -1;
  let plusCount = 0;
  let offset = 0;
  for (const seg of parts) {
    if (seg === '+') {
      plusCount++;
      if (firstPlus < 0) firstPlus = offset;
    }
    offset += seg.length + 1;
  }
  const kind = plusCount > 0 ? 'segment' : endsWithGlob ? 'prefix' : 'exact';
  const firstWildcard = firstPlus >= 0 ? firstPlus : endsWithGlob ? pattern.length - 1 : -1;
  return {
    pattern,
    kind,
    prefix: kind === 'prefix' ? pattern.slice(0, -1) : '',
    parts,
    endsWithGlob,
    firstWildcard,
    plusCount,
  };
}

function matchSegments(p: CompiledPattern, path: string): boolean {
  const pathParts = path.split('/');
  const last = p.parts.length - 1;
  if (pathParts.length < p.parts.length) return false;
  // Extra path segments are only covered by a trailing glob.
  if (pathParts.length > p.parts.length && !p.endsWithGlob) return false;
  for (let i = 0; i <= last; i++) {
    const want = p.parts[i];
    const got = pathParts[i];
    if (want === '+') {
      // An empty segment is not a segment: `secret/+` does not cover "secret/".
      if (got === '') return false;
    } else if (i === last && p.endsWithGlob) {
      if (!got.startsWith(want.slice(0, -1))) return false;
    } else if (want !== got) {
      return false;
    }
  }
  return true;
}

/** Case-sensitive match of a canonical request path. */
export function matchesPattern(p: CompiledPattern, path: string): boolean {
  switch (p.kind) {
    case 'exact':
      return path === p.pattern;
    case 'prefix':
      return path.startsWith(p.prefix);
    case 'segment':
      return matchSegments(p, path);
  }
}

/**
 * Orders glob/segment patterns by Vault's priority: negative when `a` has LOWER priority than
 * `b`. `a` is lower if its first wildcard comes earlier; else if it ends in `*` and `b` does not;
 * else if it has more `+` segments; else if it is shorter; else if it sorts first.
 */
export function comparePriority(a: CompiledPattern, b: CompiledPattern): number {
  if (a.firstWildcard !== b.firstWildcard) return a.firstWildcard - b.firstWildcard;
  if (a.endsWithGlob !== b.endsWithGlob) return a.endsWithGlob ? -1 : 1;
  if (a.plusCount !== b.plusCount) return b.plusCount - a.plusCount;
  if (a.pattern.length !== b.pattern.length) return a.pattern.length - b.pattern.length;
  return a.pattern < b.pattern ? -1 : a.pattern > b.pattern ? 1 : 0;
}
