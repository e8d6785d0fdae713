// Serves the baseline Worker with the launcher's Miniflare settings (log level, SQLite DOs,
// persistence) and prints the URL, like scripts/start.mjs does for Coffer.
import path from 'node:path';
import { build, ROOT, serve } from '../scripts/miniflare-server.mjs';

const config = path.join(ROOT, 'bench/baseline/wrangler.toml');
const scriptPath = build(config, path.join(ROOT, 'bench/baseline/dist'));
const { mf, url } = await serve({ configPath: config, scriptPath, port: 0, persistDir: process.env.BASELINE_DATA_DIR, logLevel: 'warn' });
console.log(`Baseline is listening on ${url}`);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.removeAllListeners(signal);
  process.on(signal, async () => {
    await mf.dispose();
    process.exit(0);
  });
}
