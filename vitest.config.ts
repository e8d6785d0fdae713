// Unit and integration tests, run inside workerd by Cloudflare's vitest plugin.
import { cloudflareTest } from '@cloudflare/vitest-plugin';
import { defineConfig } from 'vitest/config';
import { OBJECT_RESET_REASON } from './test/helpers/object-reset';

/** A fixed test seal key; real deployments set SEAL_KEY as a Worker secret. */
export const TEST_SEAL_KEY = '8f5a2c1e9b7d4f6a3c0e2b4d6f8a1c3e5b7d9f0a2c4e6b8d0f1a3c5e7b9d2f4a';

export default defineConfig({
  plugins: [
    // The function form: values from globalSetup (the HSM bridge's URL and key pair) go into the bindings.
    cloudflareTest(({ inject }) => ({
      wrangler: { configPath: './wrangler.toml' },
      miniflare: {
        // More than one shard, so tests cover tokens living on different shards.
        bindings: {
          SEAL_KEY: TEST_SEAL_KEY,
          TOKEN_SHARDS: '3',
          COFFER_TEST_ENGINES: '1',
          // Every handed-off path is handed off, cheap ones included (test/integration/offload; the
          // default threshold's estimates have unit tests).
          OFFLOAD_MIN_COST_US: '0',
          // Another fuzz run than the default one (test/integration/hostile/fuzz.test.ts).
          FUZZ_SEED: process.env.FUZZ_SEED ?? '',
          FUZZ_CASES: process.env.FUZZ_CASES ?? '',
          FUZZ_ONLY: process.env.FUZZ_ONLY ?? '',
          FUZZ_TRACE: process.env.FUZZ_TRACE ?? '',
          // pkcs11 managed keys: the bridge started by test/global/hsm-bridge-setup.ts.
          HSM_BRIDGE_URL: inject('hsmBridgeUrl'),
          // Cloud KMS managed keys: the emulators under test/emulators/ (AWS KMS is named per key, by its endpoint field).
          AZURE_AUTHORITY_HOST: inject('azureKeyVaultUrl'),
          AZURE_KEYVAULT_URL: `${inject('azureKeyVaultUrl')}/vaults/{vault_name}`,
          GOOGLE_CLOUDKMS_URL: inject('gcpKmsUrl'),
        },
        serviceBindings: {
          // Real mutual TLS done by workerd (see hsm-bridge/README.md, "Local runs and tests").
          HSM_BRIDGE: {
            network: {
              allow: ['private', 'local'],
              tlsOptions: {
                keypair: { privateKey: inject('hsmBridgeClientKeyPem'), certificateChain: inject('hsmBridgeClientCertPem') },
                trustedCertificates: [inject('hsmBridgeCaPem')],
              },
            },
          },
        },
      },
    })),
  ],
  test: {
    // Real servers the Worker talks to (they must run in Node, outside workerd).
    globalSetup: ['test/global/audit-sink.ts', 'test/global/transit-oracle.ts', 'test/global/jwks-server.ts', 'test/global/oidc-stub.ts', 'test/emulators/msgraph.ts', 'test/emulators/google-directory.ts', 'test/emulators/okta.ts', 'test/emulators/aws-iam-sts/index.ts', 'test/global/hsm-bridge-setup.ts', 'test/emulators/aws-kms/index.ts', 'test/emulators/azure-keyvault/index.ts', 'test/emulators/gcp-kms/index.ts', 'test/global/plugins.ts'],
    testTimeout: 30_000,
    // The reset that test/integration/offload/object-reset.test.ts gives an object under traffic:
    // the workers pool itself leaves rejections of it unhandled (it does with plain RPC calls to the
    // object, every one of them handled by the caller). Only that reason is ignored.
    onUnhandledError: (error) => !((error as { durableObjectReset?: boolean }).durableObjectReset === true && error.message === OBJECT_RESET_REASON),
    // Three files at a time: on two cores vitest's default runs one, and much of a file's time is
    // loading the Worker's modules into its isolate, waiting as well as computing (measured on this
    // 2-core machine: 2 workers 675-711 s, 3 workers 573 s). Files keep to their own emulator tenants.
    maxWorkers: 3,
    // The npm dependencies the Worker imports, pre-bundled once by Vite (one module each instead of
    // hundreds fetched into every test file's isolate): the import phase of this stage went from
    // 429 s to 276 s of worker time on this machine.
    deps: {
      optimizer: {
        ssr: {
          enabled: true,
          include: [
            'jose', 'hono', '@noble/curves/nist.js', '@noble/hashes/sha2.js', '@noble/hashes/sha3.js', '@noble/hashes/hmac.js',
            '@noble/hashes/utils.js', '@noble/ciphers/aes.js', '@peculiar/x509', '@peculiar/asn1-schema', '@peculiar/asn1-x509',
            '@peculiar/asn1-ecc', '@peculiar/asn1-rsa', '@peculiar/asn1-pkcs8', '@peculiar/asn1-ocsp', '@peculiar/asn1-csr',
            'asn1js', 'fast-xml-parser', 'acorn', 'acorn-walk', 'aws4fetch', 'reflect-metadata', '@aws-crypto/crc32c',
          ],
        },
      },
    },
    projects: [
      // Unit tests hold no Durable Object state of their own between files: they share one runner
      // (its Miniflare and loaded modules) per worker instead of starting one per file, which is
      // most of a unit file's time (measured on this 2-core machine: 78 s isolated, 36 s shared).
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'], isolate: false } },
      // Integration files each start from an empty cluster (init, unseal): one runner per file.
      { extends: true, test: { name: 'integration', include: ['test/integration/**/*.test.ts'] } },
    ],
  },
});
