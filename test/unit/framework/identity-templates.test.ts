import { describe, expect, it } from 'vitest';
import {
  resolveTemplate,
  scanTemplate,
  templateProblem,
  type IdentityContext,
} from '../../../src/framework/identity-templates';

const identity: IdentityContext = {
  entity: {
    id: 'ent-123',
    name: 'alice',
    metadata: { team: 'blue', 'dotted.key': 'dv', star: '*', plus: '+', slash: 'a/b', dots: '..', empty: '' },
    aliases: [
      {
        mountAccessor: 'auth_userpass_1a2b',
        id: 'alias-1',
        name: 'alice-up',
        metadata: { region: 'eu' },
        customMetadata: { cost: 'c42', glob: 'x*' },
      },
      {
        mountAccessor: 'auth_ldap_9z',
        id: 'alias-2',
        name: 'Alice',
        metadata: {},
        customMetadata: {},
      },
    ],
  },
  groups: [
    { id: 'grp-1', name: 'admins' },
    { id: 'grp-2', name: 'dev.team' },
    { id: 'grp-3', name: '*' },
  ],
};

describe('resolveTemplate', () => {
  it.each<[string, string]>([
    ['secret/{{identity.entity.id}}/*', 'secret/ent-123/*'],
    ['secret/{{identity.entity.name}}', 'secret/alice'],
    ['secret/{{ identity.entity.name }}', 'secret/alice'],
    ['secret/{{\tidentity.entity.id  }}', 'secret/ent-123'],
    ['secret/{{identity.entity.metadata.team}}/x', 'secret/blue/x'],
    ['secret/{{identity.entity.metadata.dotted.key}}', 'secret/dv'],
    ['a/{{identity.entity.aliases.auth_userpass_1a2b.id}}', 'a/alias-1'],
    ['a/{{identity.entity.aliases.auth_userpass_1a2b.name}}', 'a/alice-up'],
    ['a/{{identity.entity.aliases.auth_ldap_9z.name}}', 'a/Alice'],
    ['a/{{identity.entity.aliases.auth_userpass_1a2b.metadata.region}}', 'a/eu'],
    ['a/{{identity.entity.aliases.auth_userpass_1a2b.custom_metadata.cost}}', 'a/c42'],
    ['g/{{identity.groups.ids.grp-1.name}}', 'g/admins'],
    ['g/{{identity.groups.names.admins.id}}', 'g/grp-1'],
    ['g/{{identity.groups.names.dev.team.id}}', 'g/grp-2'],
    ['{{identity.entity.id}}-{{identity.entity.name}}/x', 'ent-123-alice/x'],
    ['plain/path/*', 'plain/path/*'],
  ])('%s → %s', (pattern, expected) => {
    expect(resolveTemplate(pattern, identity)).toBe(expected);
  });

  it.each<[string, string]>([
    ['missing metadata key', 'secret/{{identity.entity.metadata.nope}}'],
    ['metadata key from the prototype', 'secret/{{identity.entity.metadata.constructor}}'],
    ['unknown alias accessor', 'a/{{identity.entity.aliases.auth_nope.id}}'],
    ['missing alias metadata', 'a/{{identity.entity.aliases.auth_ldap_9z.metadata.region}}'],
    ['missing alias custom metadata', 'a/{{identity.entity.aliases.auth_ldap_9z.custom_metadata.cost}}'],
    ['not a member of the group id', 'g/{{identity.groups.ids.grp-9.name}}'],
    ['not a member of the group name', 'g/{{identity.groups.names.ops.id}}'],
    ['unknown selector', 'x/{{identity.entity.email}}'],
    ['unbalanced', 'x/{{identity.entity.id'],
    // Values that would change the pattern's meaning never widen access.
    ['value "*" would become a glob', 'secret/{{identity.entity.metadata.star}}'],
    ['value "+" would become a segment wildcard', 'secret/{{identity.entity.metadata.plus}}/x'],
    ['value with "/" would add segments', 'secret/{{identity.entity.metadata.slash}}'],
    ['value ".." would traverse', 'secret/{{identity.entity.metadata.dots}}'],
    ['empty value would collapse the pattern', 'secret/{{identity.entity.metadata.empty}}*'],
    ['glob inside custom metadata', 'a/{{identity.entity.aliases.auth_userpass_1a2b.custom_metadata.glob}}'],
    ['group named "*"', 'g/{{identity.groups.ids.grp-3.name}}'],
  ])('unresolvable: %s', (_name, pattern) => {
    expect(resolveTemplate(pattern, identity)).toBeNull();
  });

  it('entity templates need an entity; group templates only need groups', () => {
    const noEntity: IdentityContext = { groups: [{ id: 'g1', name: 'ops' }] };
    expect(resolveTemplate('secret/{{identity.entity.id}}', noEntity)).toBeNull();
    expect(resolveTemplate('g/{{identity.groups.names.ops.id}}', noEntity)).toBe('g/g1');
    expect(resolveTemplate('secret/{{identity.entity.id}}', undefined)).toBeNull();
    expect(resolveTemplate('plain', undefined)).toBe('plain');
  });

  it('entity names with unusual but harmless characters resolve', () => {
    const id: IdentityContext = {
      entity: { id: 'e', name: 'user@example.com', metadata: { v: 'a.b' }, aliases: [] },
      groups: [],
    };
    expect(resolveTemplate('u/{{identity.entity.name}}', id)).toBe('u/user@example.com');
    expect(resolveTemplate('u/{{identity.entity.metadata.v}}', id)).toBe('u/a.b');
  });
});

describe('template validation', () => {
  it.each<[string, string | null]>([
    ['a/{{identity.entity.id}}', null],
    ['a/{{ identity.entity.aliases.acc.custom_metadata.k }}', null],
    ['a/{ not a template }', null],
    ['a/{{identity.entity.id', 'unbalanced template braces: "{{" without "}}"'],
    ['a/}}', 'unbalanced template braces: "}}" without "{{"'],
    ['a/}}{{identity.entity.id}}', 'unbalanced template braces: "}}" without "{{"'],
    ['a/{{ {{identity.entity.id}}', 'unbalanced template braces: nested "{{"'],
    ['a/{{identity.entity.metadata.}}', 'unknown template "{{identity.entity.metadata.}}"'],
    ['a/{{identity.entity.aliases.acc}}', 'unknown template "{{identity.entity.aliases.acc}}"'],
    ['a/{{identity.entity.aliases.acc.email}}', 'unknown template "{{identity.entity.aliases.acc.email}}"'],
    ['a/{{identity.groups.ids.g1}}', 'unknown template "{{identity.groups.ids.g1}}"'],
    ['a/{{identity.groups.names.ops.name}}', 'unknown template "{{identity.groups.names.ops.name}}"'],
  ])('templateProblem(%j)', (pattern, problem) => {
    expect(templateProblem(pattern)).toBe(problem);
  });

  it('scanTemplate splits literals and expressions', () => {
    expect(scanTemplate('a/{{ x }}/b{{y}}')).toEqual({
      ok: true,
      parts: [{ literal: 'a/' }, { expr: ' x ' }, { literal: '/b' }, { expr: 'y' }],
    });
  });
});
