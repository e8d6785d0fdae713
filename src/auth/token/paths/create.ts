// auth/token/create, create-orphan and create/:role_name.
import { createTokenEntry, type CreateParams } from '../../../core/tokens/rules';
import type { FieldData, FieldSchemas } from '../../../framework/fields';
import type { LogicalRequest, PathDef } from '../../../framework/backend';
import { badRequest, CofferError, permissionDenied } from '../../../framework/errors';
import { globMatch } from '../../../core/tokens/roles';
import { authBlock } from '../auth-block';
import type { TokenOps } from '../ops';

export const createFields: FieldSchemas = {
  id: { type: 'string', description: 'Token id to use instead of a random one (root or sudo only).' },
  role_name: { type: 'string', description: 'Token role to create the token against.' },
  policies: { type: 'comma-string-list', description: 'Policies of the token; default: the parent\'s.' },
  meta: { type: 'string-map', description: 'Metadata shown in lookups and audit logs.' },
  no_parent: { type: 'bool', description: 'Create an orphan token (root or sudo only).' },
  no_default_policy: { type: 'bool', description: 'Do not attach the default policy.' },
  renewable: { type: 'bool', description: 'Whether the token can be renewed.', default: true, nullIsUnset: true },
  ttl: { type: 'duration', description: 'Initial TTL.' },
  lease: { type: 'duration', description: 'Deprecated alias of ttl.' },
  type: { type: 'string', description: 'service or batch.' },
  explicit_max_ttl: { type: 'duration', description: 'Hard limit on the token\'s life, renewals included.' },
  display_name: { type: 'string', description: 'Name shown for the token (stored as token-<name>).' },
  num_uses: { type: 'int', description: 'Number of uses; 0 is unlimited.' },
  period: { type: 'duration', description: 'Make the token periodic with this period.' },
  entity_alias: { type: 'string', description: 'Entity alias to attach (with a role allowing it).' },
};

function params(f: FieldData): CreateParams {
  return {
    id: f.get('id'),
    // None given (absent, null or empty): the parent's, or the role's allowed policies.
    policies: f.get<string[]>('policies').length > 0 ? f.get<string[]>('policies') : null,
    meta: f.get('meta'),
    noParent: f.get('no_parent'),
    noDefaultPolicy: f.get('no_default_policy'),
    renewable: f.has('renewable') ? f.get<boolean>('renewable') : null,
    ttl: f.get<number>('ttl') || f.get<number>('lease'),
    explicitMaxTtl: f.get('explicit_max_ttl'),
    displayName: f.get('display_name'),
    numUses: f.get('num_uses'),
    period: f.get('period'),
    type: f.get('type'),
  };
}

export function createPaths(ops: TokenOps): PathDef[] {
  const create = (orphanEndpoint: boolean) => async (req: LogicalRequest, f: FieldData) => {
    const caller = await ops.caller(req);
    if (!caller) throw permissionDenied();
    const roleName = f.get<string>('role_name');
    const role = roleName ? await ops.role(roleName) : null;
    if (roleName && !role) throw badRequest(`unknown role ${roleName}`);
    const entityAlias = f.get<string>('entity_alias');
    if (entityAlias) {
      if (!role) throw badRequest("'entity_alias' is only allowed in combination with token role");
      // Vault compares lowercased; the alias itself keeps its case.
      const wanted = entityAlias.toLowerCase();
      if (!role.allowedEntityAliases.some((a) => globMatch(a.toLowerCase(), wanted))) throw badRequest("invalid 'entity_alias' value");
    }
    const { entry, warnings } = createTokenEntry(params(f), {
      parent: caller.entry,
      sudo: req.sudo === true,
      orphanEndpoint,
      role,
      mount: await ops.mountConfig(),
      now: Date.now(),
    });
    if (entityAlias) {
      // Only once everything else about the token is known to be fine: this may create an entity.
      const { entityId, disabled } = await ops.entityForAlias(entityAlias);
      if (disabled) throw new CofferError(403, ['entity from given entity alias is disabled']);
      entry.entityId = entityId;
    }
    const issued = await ops.issue(entry, f.get('id'), caller);
    return { auth: authBlock(issued.token, issued.entry, issued.entry.ttl), warnings };
  };
  return [
    { pattern: 'create', fields: createFields, operations: { update: create(false) }, summary: 'Create a token (a child of the caller unless orphaned).' },
    { pattern: 'create-orphan', fields: createFields, operations: { update: create(true) }, summary: 'Create an orphan token.' },
    {
      pattern: 'create/(?<role_name>\\w(?:[\\w.-]*\\w)?)',
      fields: createFields,
      operations: { update: create(false) },
      summary: 'Create a token against a token role.',
    },
  ];
}
