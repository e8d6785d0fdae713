// ?help=1: a description of a path built from its definition (summary, operations, fields),
// in the shape of Vault's help response. Nothing is executed.

import type { PathDef } from './backend';

export function pathHelp(fullPath: string, backendType: string, def: PathDef): Record<string, unknown> {
  const lines = [`## PATH\n\n${fullPath} (${backendType})`];
  if (def.summary) lines.push(def.summary);
  const ops = Object.keys(def.operations);
  if (def.operations.update && !def.operations.create && def.existenceCheck) ops.push('create');
  lines.push(`## OPERATIONS\n\n${ops.sort().join(', ')}`);
  const fields = Object.entries(def.fields ?? {});
  if (fields.length > 0) {
    lines.push(
      `## PARAMETERS\n\n${fields
        .map(([name, f]) => `${name} (${f.type}${f.required ? ', required' : ''}${f.default !== undefined ? `, default ${JSON.stringify(f.default)}` : ''})\n    ${f.description}`)
        .join('\n\n')}`,
    );
  } else if (def.arbitraryData) {
    lines.push('## PARAMETERS\n\nThe request body is stored as given.');
  }
  return { help: lines.join('\n\n'), see_also: null };
}
