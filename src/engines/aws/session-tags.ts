// Session tags of assumed_role credentials. A value may name the caller's identity with the
// templates ACL policies use ({{identity.entity.name}}, {{identity.entity.metadata.team}},
// {{identity.entity.aliases.<accessor>.name}}, {{identity.groups.names.<name>.id}}, …):
// resolved per request, so one role tags each session with who asked for it (vault#19412).

import type { LogicalRequest } from '../../framework/backend';
import { badRequest } from '../../framework/errors';
import { hasTemplate, resolveTemplateText } from '../../framework/identity-templates';

export async function resolveSessionTags(req: LogicalRequest, tags: Record<string, string>): Promise<{ Key: string; Value: string }[]> {
  const keys = Object.keys(tags).sort();
  if (keys.length === 0) return [];
  const templated = keys.some((k) => hasTemplate(tags[k]));
  const entity = templated && req.entity ? await req.entity() : null;
  const identity = entity ? { entity, groups: entity.groups } : undefined;
  return keys.map((key) => {
    const raw = tags[key];
    if (!hasTemplate(raw)) return { Key: key, Value: raw };
    const value = resolveTemplateText(raw, identity);
    if (value === null) {
      throw badRequest(`session tag ${JSON.stringify(key)}: ${entity ? `template ${JSON.stringify(raw)} cannot be resolved for the caller's entity` : `template ${JSON.stringify(raw)} needs the caller to have an entity`}`);
    }
    return { Key: key, Value: value };
  });
}
