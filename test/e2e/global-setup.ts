// Builds the Worker once for every end-to-end test (launchers then start with COFFER_SKIP_BUILD=1).
import path from 'node:path';
// @ts-expect-error -- plain ESM helper without type declarations
import { build, ROOT } from '../../scripts/miniflare-server.mjs';

export default function setup(): void {
  build(path.join(ROOT, 'wrangler.toml'), path.join(ROOT, 'dist'));
}
