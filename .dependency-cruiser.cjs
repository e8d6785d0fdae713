// `npm run check:imports` (and the type-check stage of `npm test`): no import circles, and
// imports flow down the layers of DESIGN.md. Type-only imports count (tsPreCompilationDeps).
const app = '^(src|durable-objects)/';
const layer = (name, from, allowed, comment) => ({
  name,
  severity: 'error',
  comment,
  from: { path: from },
  to: { path: app, pathNot: allowed },
});

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'Import circles make load order and layering fragile.', from: {}, to: { circular: true } },
    layer('crypto-imports-nothing-of-the-app', '^src/crypto/', '^src/crypto/', 'crypto is the bottom layer: helpers over WebCrypto and audited libraries.'),
    layer('framework-above-crypto-only', '^src/framework/', '^src/(framework|crypto)/', 'The framework sees only itself and crypto.'),
    layer('core-above-framework-only', '^src/core/', '^src/(core|framework|crypto)/', 'core is pure logic over Storage.'),
    layer(
      'engines-see-framework-and-crypto',
      '^src/engines/(?!identity/)',
      '^src/(engines|framework|crypto|managed-keys)/',
      'Engines import only the framework, crypto and the managed-keys interface (each its own folder).',
    ),
    layer('managed-keys-above-framework-and-crypto', '^src/managed-keys/', '^src/(managed-keys|framework|crypto)/', 'Managed keys (one interface, one backend per type) see only the framework and crypto.'),
    {
      name: 'managed-keys-used-by-engines-sys-and-objects',
      severity: 'error',
      comment: 'Only engines, the system backend and the Durable Objects use managed keys (RPC contracts and the registry name their types).',
      from: { path: app, pathNot: '^(src/(managed-keys|engines|sys|rpc)/|src/registry\\.ts$|durable-objects/)' },
      to: { path: '^src/managed-keys/' },
    },
    layer('identity-engine-sees-its-core-types', '^src/engines/identity/', '^src/(engines/identity|core/identity|framework|crypto)/', 'The identity mount also shares its view types with core/identity.'),
    layer('backends-below-pipeline', '^src/(sys|auth)/', '^src/(sys|auth|engines|core|framework|crypto|managed-keys)/', 'sys/ and auth methods never reach the pipeline, the objects, RPC or the Worker.'),
    layer('pipeline-below-objects', '^src/pipeline/', '^src/(pipeline|sys|auth|engines|core|framework|crypto|managed-keys|registry\\.ts)', 'The pipeline never reaches the objects, RPC or the Worker.'),
    {
      name: 'engines-are-separate',
      severity: 'error',
      comment: 'One engine never imports another.',
      from: { path: '^src/engines/([^/]+)/' },
      to: { path: '^src/engines/', pathNot: '^src/engines/$1/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^(test|bench|scripts|hsm-bridge)/' },
  },
};
